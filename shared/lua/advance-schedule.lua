--[[
  Moves a schedule's cursor forward (never back) and optionally enables or disables
  it, in one step: resume moves the cursor to now before enabling, so fires that fell
  in the pause are not sent.

  KEYS[1] schedule hash   rev, enabled, after
  ARGV[1] cursor ms       the new cursor, if later than the current one
  ARGV[2] rev             only if the schedule still has this revision; '' for any
  ARGV[3] enabled         '1' or '0' to set it, '' to leave it

  Returns the cursor after the call, -1 when the schedule does not exist, -2 when its
  revision differs.
]]
if redis.call('EXISTS', KEYS[1]) == 0 then
  return -1
end
if ARGV[2] ~= '' and redis.call('HGET', KEYS[1], 'rev') ~= ARGV[2] then
  return -2
end
local after = tonumber(redis.call('HGET', KEYS[1], 'after') or '0')
if after < tonumber(ARGV[1]) then
  after = tonumber(ARGV[1])
  redis.call('HSET', KEYS[1], 'after', ARGV[1])
end
if ARGV[3] ~= '' then
  redis.call('HSET', KEYS[1], 'enabled', ARGV[3])
end
return after
