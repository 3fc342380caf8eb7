--[[
  Moves a campaign to a new state if its current state allows it, and keeps the
  indexes of active and recently finished campaigns in step, in the same step.
  Moved to a final state (completed, expired, failed), every key of the campaign
  gets a TTL of ARGV[3] ms (CAMPAIGN_RETENTION_DAYS), in the same step too. A
  cancelled campaign is final only when its last queued segment has been dropped:
  finish-segment.lua sets its TTLs then.

  KEYS[1] campaign hash
  KEYS[2] active campaigns           set: campaigns not finished (running, paused, or
                                     cancelled and still dropping its queued segments)
  KEYS[3] recently finished campaigns sorted set: id -> when it finished (ms), a day's worth
  KEYS[4..10] the campaign's outcomes bitfield, failures list, releases hash, leases hash,
           finished-segments bitmap, undelivered list and history stream
  ARGV[1] the new state
  ARGV[2] an error to store with the change ('' for none)
  ARGV[3] retention after a final state, ms ('0': keep forever)
  ARGV[4..] the states it may be moved from

  Returns the state before the call, or 'missing'. The state is changed only
  when that old state is one of ARGV[4..].
]]
local old = redis.call('HGET', KEYS[1], 'state')
if not old then
  return 'missing'
end
for i = 4, #ARGV do
  if ARGV[i] == old then
    redis.call('HSET', KEYS[1], 'state', ARGV[1])
    if ARGV[2] ~= '' then
      redis.call('HSET', KEYS[1], 'error', ARGV[2])
    end
    local id = redis.call('HGET', KEYS[1], 'id')
    if ARGV[1] == 'completed' or ARGV[1] == 'expired' or ARGV[1] == 'failed' then
      local t = redis.call('TIME')
      local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
      redis.call('SREM', KEYS[2], id)
      redis.call('ZADD', KEYS[3], now, id)
      redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - 86400000)
      local retentionMs = tonumber(ARGV[3]) or 0
      if retentionMs > 0 then
        for _, key in ipairs({ KEYS[1], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10] }) do
          redis.call('PEXPIRE', key, retentionMs)
        end
      end
    else
      -- Cancelled stays active until its last segment is dropped (finish-segment.lua).
      -- SADD also indexes a campaign created before the index existed.
      redis.call('SADD', KEYS[2], id)
    end
    return old
  end
end
return old
