--[[
  Extends a lease (the governor's, a scheduled fire's claim), but only while it is
  still ours. A plain PEXPIRE would revive a lease that expired and was taken by
  another holder in the meantime, leaving two of them acting.

  KEYS[1] lease key     string: the holder's id, with a TTL
  ARGV[1] holder id     this process's id
  ARGV[2] ttl ms        the lease's new time to live

  Returns 1 when extended, 0 when the lease is gone or held by someone else.
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
  return 1
end
return 0
