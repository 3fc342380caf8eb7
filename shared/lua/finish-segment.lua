--[[
  Marks one segment of a campaign finished (once, however often it is
  redelivered), or marks the campaign fully enqueued, and completes the
  campaign when both are true: every segment enqueued and every one finished.

  KEYS[1] campaign hash          { state, enqueued, segmentsTotal, segmentsDone, cancelled, ... }
  KEYS[2] finished-segments bitmap
  ARGV[1] 'segment' or 'enqueued'
  ARGV[2] the segment's index, or the campaign's segment count for 'enqueued'
  ARGV[3] devices of this segment dropped unsent (cancelled), counted once

  Returns the campaign's state after the call.
]]
if ARGV[1] == 'segment' then
  local old = redis.call('SETBIT', KEYS[2], tonumber(ARGV[2]), 1)
  if old == 0 then
    redis.call('HINCRBY', KEYS[1], 'segmentsDone', 1)
    local dropped = tonumber(ARGV[3]) or 0
    if dropped > 0 then
      redis.call('HINCRBY', KEYS[1], 'cancelled', dropped)
    end
  end
else
  redis.call('HSET', KEYS[1], 'enqueued', '1', 'segmentsTotal', ARGV[2])
end

local h = redis.call('HMGET', KEYS[1], 'state', 'enqueued', 'segmentsTotal', 'segmentsDone')
local state = h[1]
if h[2] == '1' and (tonumber(h[4]) or 0) >= (tonumber(h[3]) or 0) then
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  if state == 'running' or state == 'paused' then
    state = 'completed'
    redis.call('HSET', KEYS[1], 'state', state, 'finishedAt', now)
  elseif state == 'cancelled' and not redis.call('HGET', KEYS[1], 'finishedAt') then
    redis.call('HSET', KEYS[1], 'finishedAt', now)
  end
end
return state
