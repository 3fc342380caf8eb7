--[[
  Appends one point to a campaign's report history (campaign-history.js), unless its
  last point is younger than the step: every sampler tick calls this, and only one
  call per step writes. The history key takes the campaign hash's TTL (its retention,
  once it finished), so it never outlives the campaign; finish-segment.lua and
  set-state.lua set the same TTL on it when the campaign finishes. Nothing is written
  for a campaign whose hash is gone: a late sample must not recreate a removed one.

  KEYS[1] campaign hash
  KEYS[2] history stream         fields n (processed), r (rate limit), p (gateway p95 ms, '' unknown), s (SLO ms)
  ARGV[1] step, ms: no point is added within this long of the last one
  ARGV[2] cap: at most about this many points (XADD MAXLEN ~)
  ARGV[3] '1' to append whatever the step (a campaign's final point)
  ARGV[4..] the point's field/value pairs

  Returns 1 if a point was appended, else 0.
]]
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
if ARGV[3] ~= '1' then
  local last = redis.call('XREVRANGE', KEYS[2], '+', '-', 'COUNT', 1)[1]
  if last then
    local t = redis.call('TIME')
    local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
    local lastMs = tonumber(string.match(last[1], '^(%d+)'))
    if now - lastMs < tonumber(ARGV[1]) then
      return 0
    end
  end
end
local args = { 'XADD', KEYS[2], 'MAXLEN', '~', ARGV[2], '*' }
for i = 4, #ARGV do
  args[#args + 1] = ARGV[i]
end
redis.call(unpack(args))
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 then
  redis.call('PEXPIRE', KEYS[2], ttl)
end
return 1
