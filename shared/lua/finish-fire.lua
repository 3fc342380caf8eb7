--[[
  Records a fire's outcome once, releases its lease and moves the schedule's cursor
  past it. A fire another scheduler holds a live lease on is left alone ('busy'), so a
  scheduler that decided to skip a fire cannot overrule one that is launching it.

  KEYS[1] schedule hash   after: the cursor, only ever moved forward
  KEYS[2] fire hash
  KEYS[3] fire lease
  KEYS[4] fire list       sorted set of recent fire instants, trimmed to ARGV[8]
  ARGV[1] fire instant    ms
  ARGV[2] holder id
  ARGV[3] state           launched | skipped | failed
  ARGV[4] campaign id     or ''
  ARGV[5] reason          or ''
  ARGV[6] finished at     ms
  ARGV[7] record ttl ms
  ARGV[8] fires to keep in the list
  ARGV[9] '1': only if no scheduler ever claimed the fire (a skip decided without a claim)

  A schedule removed while this fire was launching (remove-schedule.lua leaves such a
  fire to complete) keeps no record of it: the record and the lease are deleted.

  Returns 'ok', the state already recorded ('launched' | 'skipped' | 'failed'), 'busy',
  'claimed' (ARGV[9] was '1' and a scheduler claimed it before: it may have got
  part-way, so the caller must claim it and look), or 'gone' (ARGV[9] was '1' and the
  schedule was removed meanwhile: nothing to record).
]]
local state = redis.call('HGET', KEYS[2], 'state')
if state == 'launched' or state == 'skipped' or state == 'failed' then
  return state
end
if ARGV[9] == '1' and redis.call('EXISTS', KEYS[1]) == 0 then
  return 'gone'
end
local holder = redis.call('GET', KEYS[3])
if holder and holder ~= ARGV[2] then
  return 'busy'
end
if ARGV[9] == '1' and state == 'claimed' then
  return 'claimed'
end
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('DEL', KEYS[2], KEYS[3])
  return 'ok'
end
redis.call('HSET', KEYS[2], 'state', ARGV[3], 'at', ARGV[1], 'campaignId', ARGV[4], 'reason', ARGV[5], 'finishedAt', ARGV[6])
redis.call('PEXPIRE', KEYS[2], ARGV[7])
if holder then
  redis.call('DEL', KEYS[3])
end
redis.call('ZADD', KEYS[4], ARGV[1], ARGV[1])
redis.call('ZREMRANGEBYRANK', KEYS[4], 0, -tonumber(ARGV[8]) - 1)
redis.call('PEXPIRE', KEYS[4], ARGV[7])
if tonumber(redis.call('HGET', KEYS[1], 'after') or '0') < tonumber(ARGV[1]) then
  redis.call('HSET', KEYS[1], 'after', ARGV[1])
end
return 'ok'
