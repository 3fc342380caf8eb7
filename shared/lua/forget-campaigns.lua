--[[
  Drops from the campaigns index the ids whose campaign hash is gone: removed
  by its TTL, CAMPAIGN_RETENTION_DAYS after the campaign finished
  (finish-segment.lua, set-state.lua). The check and the removal are one step,
  so an id created again meanwhile (a scheduler's derived id) is never dropped.

  KEYS[1] campaigns index      sorted set of every campaign id, by creation ms
  KEYS[2..] the campaign hash of each id in ARGV, in the same order
  ARGV    the ids to check

  Returns the number of ids dropped.
]]
local dropped = 0
for i = 1, #ARGV do
  if redis.call('EXISTS', KEYS[i + 1]) == 0 then
    dropped = dropped + redis.call('ZREM', KEYS[1], ARGV[i])
  end
end
return dropped
