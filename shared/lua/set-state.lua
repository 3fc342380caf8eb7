--[[
  Moves a campaign to a new state if its current state allows it.

  KEYS[1] campaign hash
  ARGV[1] the new state
  ARGV[2..] the states it may be moved from

  Returns the state before the call, or 'missing'. The state is changed only
  when that old state is one of ARGV[2..].
]]
local old = redis.call('HGET', KEYS[1], 'state')
if not old then
  return 'missing'
end
for i = 2, #ARGV do
  if ARGV[i] == old then
    redis.call('HSET', KEYS[1], 'state', ARGV[1])
    return old
  end
end
return old
