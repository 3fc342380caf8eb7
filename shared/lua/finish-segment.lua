--[[
  Marks one segment of a campaign finished (once, however often it is
  redelivered), or marks the campaign fully enqueued, and finishes the
  campaign when both are true: every segment enqueued and every one finished.
  A running (or paused) campaign then becomes 'expired' if its deadline cut off
  any device (counter expired > 0), else 'completed'. A finishing campaign leaves
  the active index and enters the recently finished one, in the same step.

  Retention: once the campaign is in a final state (completed, expired, failed, or
  cancelled with its last segment dropped), every key of it gets a TTL of ARGV[4]
  ms, in the same step, and again on each later call (a failed campaign's queued
  segments are dropped after it failed, and may create its bitfield or leases
  then), so nothing of it outlives the retention by more than that. A campaign
  whose hash is gone (removed) is left alone: nothing is recreated.

  KEYS[1] campaign hash          { id, state, enqueued, segmentsTotal, segmentsDone, cancelled, expired, ... }
  KEYS[2] finished-segments bitmap
  KEYS[3] active campaigns       set of ids (create-campaign.lua, set-state.lua)
  KEYS[4] recently finished      sorted set: id -> when it finished (ms), a day's worth
  KEYS[5..10] the campaign's outcomes bitfield, failures list, releases hash, leases hash,
             undelivered list and history stream
  ARGV[1] 'segment' or 'enqueued'
  ARGV[2] the segment's index, or the campaign's segment count for 'enqueued'
  ARGV[3] devices of this segment dropped unsent (cancelled), counted once: campaigns with
          2-bit outcomes only; 3-bit ones record cancelled devices in the bitfield (code 5)
  ARGV[4] retention after the final state, ms ('0': keep forever)

  Returns the campaign's state after the call, or 'missing'.
]]
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 'missing'
end
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

local h = redis.call('HMGET', KEYS[1], 'state', 'enqueued', 'segmentsTotal', 'segmentsDone', 'expired', 'id', 'finishedAt')
local state = h[1]
local finished = false
local now = 0
if h[2] == '1' and (tonumber(h[4]) or 0) >= (tonumber(h[3]) or 0) then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  if state == 'running' or state == 'paused' then
    state = (tonumber(h[5]) or 0) > 0 and 'expired' or 'completed'
    redis.call('HSET', KEYS[1], 'state', state, 'finishedAt', now)
    finished = true
  elseif state == 'cancelled' and not h[7] then
    redis.call('HSET', KEYS[1], 'finishedAt', now)
    finished = true
  end
end
if finished then
  redis.call('SREM', KEYS[3], h[6])
  redis.call('ZADD', KEYS[4], now, h[6])
  redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now - 86400000)
elseif (state == 'running' or state == 'paused') and h[6] then
  -- Indexes a campaign created before the index existed as soon as one of its segments is done.
  redis.call('SADD', KEYS[3], h[6])
end
local retentionMs = tonumber(ARGV[4]) or 0
local final = state == 'completed' or state == 'expired' or state == 'failed' or (state == 'cancelled' and (finished or h[7]))
if retentionMs > 0 and final then
  for _, key in ipairs({ KEYS[1], KEYS[2], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10] }) do
    redis.call('PEXPIRE', key, retentionMs)
  end
end
return state
