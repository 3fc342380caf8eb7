--[[
  Records send outcomes for devices of one campaign, once per device: a device
  whose outcome is already set keeps it, and its counter is not bumped again.
  That makes a redelivered segment's outcomes harmless (idempotency per
  campaign and device sequence number).

  KEYS[1] campaign hash          counters delivered, disabled, failed
  KEYS[2] outcomes bitfield      2 bits per device: 0 pending, 1 delivered, 2 disabled, 3 failed
  KEYS[3] failures list          JSON { seq, endpointArn, reason }, newest last, capped
  KEYS[4] disabled endpoints set
  ARGV    groups of 4: seq, code (1..3), endpointArn, reason ('' when none)

  Returns the number of devices recorded for the first time.
]]
local counters = { 'delivered', 'disabled', 'failed' }
local fresh = 0
local failuresAdded = false
for i = 1, #ARGV, 4 do
  local offset = '#' .. ARGV[i]
  local code = tonumber(ARGV[i + 1])
  local old = redis.call('BITFIELD', KEYS[2], 'SET', 'u2', offset, code)[1]
  if old == 0 then
    fresh = fresh + 1
    redis.call('HINCRBY', KEYS[1], counters[code], 1)
    if code == 2 then
      redis.call('SADD', KEYS[4], ARGV[i + 2])
    elseif code == 3 then
      redis.call('RPUSH', KEYS[3], cjson.encode({ seq = tonumber(ARGV[i]), endpointArn = ARGV[i + 2], reason = ARGV[i + 3] }))
      failuresAdded = true
    end
  elseif old ~= code then
    redis.call('BITFIELD', KEYS[2], 'SET', 'u2', offset, old)
  end
end
if failuresAdded then
  redis.call('LTRIM', KEYS[3], -1000, -1)
end
return fresh
