--[[
  Sets the bucket's rate and burst, atomically with respect to takes: tokens
  earned at the old rate up to now are kept (capped at the new burst), and
  from now on tokens accrue at the new rate.

  KEYS[1] global bucket hash     { rate, burst, tokens, ts }
  ARGV[1] rate                   sends/s (>= 0)
  ARGV[2] burst                  tokens (>= 1)

  Returns 1.
]]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local b = redis.call('HMGET', KEYS[1], 'rate', 'burst', 'tokens', 'ts')
local newBurst = tonumber(ARGV[2])
local tokens = newBurst
if b[1] and b[3] and b[4] then
  local elapsed = math.max(0, now - tonumber(b[4]))
  tokens = math.min(tonumber(b[2]), tonumber(b[3]) + elapsed * tonumber(b[1]) / 1000)
  tokens = math.min(newBurst, tokens)
end
redis.call('HSET', KEYS[1], 'rate', ARGV[1], 'burst', newBurst, 'tokens', tostring(tokens), 'ts', now)
return 1
