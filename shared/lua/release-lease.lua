--[[
  Gives a lease up, but only if it is still ours: a holder that stops after its
  lease expired must not delete its successor's.

  KEYS[1] lease key     string: the holder's id, with a TTL
  ARGV[1] holder id     this process's id

  Returns 1 when deleted, 0 when the lease was not ours (or already gone).
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
