--[[
  Extends the governor's lease, but only while it is still ours. A plain PEXPIRE
  would revive a lease that expired and was taken by another governor in the
  meantime, leaving two of them steering the rate.

  KEYS[1] lease key     string: the holder's id, with a TTL
  ARGV[1] holder id     this governor's id
  ARGV[2] ttl ms        the lease's new time to live

  Returns 1 when extended, 0 when the lease is gone or held by someone else.
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
  return 1
end
return 0
