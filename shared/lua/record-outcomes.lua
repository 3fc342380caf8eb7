--[[
  Records send outcomes for devices of one campaign, once per device: a device
  whose outcome is already set keeps it, and its counter is not bumped again.
  That makes a redelivered segment's outcomes harmless (idempotency per
  campaign and device sequence number), expiry included: a device expired by one
  pass is never counted delivered by another, nor the other way round. Cancelled
  (code 5) likewise: a device dropped by a cancel is counted once, and never also
  delivered, so delivered + disabled + failed + expired + cancelled = total.

  Nothing is written for a campaign whose hash is gone (removed after
  CAMPAIGN_RETENTION_DAYS): a late report must not recreate its keys without a TTL.

  KEYS[1] campaign hash          counters delivered, disabled, failed, expired, cancelled; outcomeBits
  KEYS[2] outcomes bitfield      outcomeBits (3, or 2 for campaigns created before expiry)
                                 bits per device: 0 pending, 1 delivered, 2 disabled, 3 failed,
                                 4 expired, 5 cancelled (4 and 5 only in 3-bit campaigns)
  KEYS[3] failures list          JSON { seq, endpointArn, reason }, newest last, capped
  KEYS[4] disabled endpoints set
  KEYS[5] undelivered list       JSON { s = seq, o = code, a = endpointArn, p = platform, u = userId,
                                 r = reason } of every device recorded disabled, failed, expired or
                                 cancelled, oldest first, for pushctl failures. The first 200,000
                                 only (~30 MB at most): a campaign cancelled early would otherwise
                                 store its whole audience again; the counters say what is missing.
  ARGV    groups of 6: seq, code (1..5), endpointArn ('' for delivered), reason ('' when none),
          platform, userId ('' when unknown)

  Returns the number of devices recorded for the first time.
]]
local counters = { 'delivered', 'disabled', 'failed', 'expired', 'cancelled' }
local UNDELIVERED_CAP = 200000
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
local width = 'u' .. (redis.call('HGET', KEYS[1], 'outcomeBits') or '2')
if width == 'u2' then
  for i = 2, #ARGV, 6 do
    if tonumber(ARGV[i]) > 3 then
      return redis.error_reply('outcome code ' .. ARGV[i] .. ' does not fit the 2-bit outcome field of an older campaign')
    end
  end
end
local fresh = 0
local failuresAdded = false
local undelivered = redis.call('LLEN', KEYS[5])
for i = 1, #ARGV, 6 do
  local offset = '#' .. ARGV[i]
  local code = tonumber(ARGV[i + 1])
  local old = redis.call('BITFIELD', KEYS[2], 'SET', width, offset, code)[1]
  if old == 0 then
    fresh = fresh + 1
    redis.call('HINCRBY', KEYS[1], counters[code], 1)
    if code == 2 then
      redis.call('SADD', KEYS[4], ARGV[i + 2])
    elseif code == 3 then
      redis.call('RPUSH', KEYS[3], cjson.encode({ seq = tonumber(ARGV[i]), endpointArn = ARGV[i + 2], reason = ARGV[i + 3] }))
      failuresAdded = true
    end
    if code > 1 and ARGV[i + 2] ~= '' and undelivered < UNDELIVERED_CAP then
      redis.call('RPUSH', KEYS[5], cjson.encode({ s = tonumber(ARGV[i]), o = code, a = ARGV[i + 2], p = ARGV[i + 4], u = ARGV[i + 5], r = ARGV[i + 3] }))
      undelivered = undelivered + 1
    end
  elseif old ~= code then
    redis.call('BITFIELD', KEYS[2], 'SET', width, offset, old)
  end
end
if failuresAdded then
  redis.call('LTRIM', KEYS[3], -1000, -1)
end
return fresh
