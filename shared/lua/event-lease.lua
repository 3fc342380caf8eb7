--[[
  The per-event idempotency record: who is sending an event now (a lease) and
  whether it is done. Endpoint outcomes live in the same hash as fields "e:<hash>",
  written with plain HSET as sends complete.

  KEYS[1] event hash   { owner, leaseUntil, eventId, done, e:<endpoint hash> = outcome ... }
  ARGV[1] mode         'claim', 'renew', 'finish' or 'release'
  ARGV[2] owner        id of this delivery's attempt
  ARGV[3] lease ms     how long the lease lasts without a renew ('claim', 'renew')
  ARGV[4] ttl ms       how long the hash is kept after the last claim or finish
  ARGV[5] event id     kept for people reading the hash ('claim')

  Returns
    claim:   { 'done' }                      the event was sent before: ack it
             { 'busy', msLeft }              another delivery holds the lease
             { 'claimed', field, outcome, ... } the lease is ours; the endpoints
                                             already sent, without their "e:"
    renew:   1 while the lease is ours, 0 once another delivery took it over
    finish:  1 (marks done, drops the lease, keeps the hash ttl ms from now)
    release: 1 when ours was dropped, 0 when it was not ours

  A lease that is not renewed lapses, so a delivery whose process died is taken over
  by the redelivery once leaseUntil passes; the Redis clock decides, not the callers'.
]]
local key, mode, owner = KEYS[1], ARGV[1], ARGV[2]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

if mode == 'finish' then
  redis.call('HSET', key, 'done', string.format('%d', now))
  redis.call('HDEL', key, 'owner', 'leaseUntil')
  redis.call('PEXPIRE', key, ARGV[4])
  return 1
end

local current = redis.call('HGET', key, 'owner')
local leaseUntil = tonumber(redis.call('HGET', key, 'leaseUntil') or '0')

if mode == 'release' then
  if current ~= owner then return 0 end
  redis.call('HDEL', key, 'owner', 'leaseUntil')
  return 1
end

if mode == 'renew' then
  if redis.call('HEXISTS', key, 'done') == 1 then return 0 end
  if current and current ~= owner and leaseUntil > now then return 0 end
  redis.call('HSET', key, 'owner', owner, 'leaseUntil', string.format('%d', now + tonumber(ARGV[3])))
  return 1
end

-- claim
if redis.call('HEXISTS', key, 'done') == 1 then return { 'done' } end
if current and current ~= owner and leaseUntil > now then
  return { 'busy', leaseUntil - now }
end
redis.call('HSET', key, 'owner', owner, 'leaseUntil', string.format('%d', now + tonumber(ARGV[3])), 'eventId', ARGV[5])
redis.call('PEXPIRE', key, ARGV[4])
local result = { 'claimed' }
local fields = redis.call('HGETALL', key)
for i = 1, #fields, 2 do
  if string.sub(fields[i], 1, 2) == 'e:' then
    result[#result + 1] = string.sub(fields[i], 3)
    result[#result + 1] = fields[i + 1]
  end
end
return result
