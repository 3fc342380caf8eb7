--[[
  Claims one fire of a schedule for one scheduler process, so that however many
  schedulers run, one of them launches it. The claim is a lease: if its holder dies
  before recording the outcome, the lease expires and another scheduler claims the
  fire again (attempts tells it an earlier attempt may have got part-way).

  KEYS[1] schedule hash   rev, enabled, after (fires at or before it are dealt with)
  KEYS[2] fire hash       state, holder, attempts, at, campaignId, reason, error, finishedAt
  KEYS[3] fire lease      string: the holder's id, with a TTL
  KEYS[4] fire list       sorted set of the schedule's recent fire instants
  ARGV[1] fire instant    ms
  ARGV[2] holder id       this scheduler's id
  ARGV[3] lease ms
  ARGV[4] record ttl ms   how long the fire hash is kept
  ARGV[5] rev             the schedule revision the caller computed the fire from

  Returns { status, attempts }. status: 'claimed' (ours now), 'busy' (another holder's
  lease is live), 'launched' | 'skipped' | 'failed' (already dealt with), or 'gone' (the
  schedule was removed, paused or replaced, or its cursor is past this fire).
]]
if redis.call('HGET', KEYS[1], 'rev') ~= ARGV[5] or redis.call('HGET', KEYS[1], 'enabled') ~= '1' then
  return { 'gone', 0 }
end
local attempts = tonumber(redis.call('HGET', KEYS[2], 'attempts') or '0')
local state = redis.call('HGET', KEYS[2], 'state')
if state == 'launched' or state == 'skipped' or state == 'failed' then
  return { state, attempts }
end
if tonumber(redis.call('HGET', KEYS[1], 'after') or '0') >= tonumber(ARGV[1]) then
  return { 'gone', attempts }
end
if redis.call('EXISTS', KEYS[3]) == 1 then
  return { 'busy', attempts }
end
redis.call('SET', KEYS[3], ARGV[2], 'PX', ARGV[3])
attempts = redis.call('HINCRBY', KEYS[2], 'attempts', 1)
redis.call('HSET', KEYS[2], 'state', 'claimed', 'holder', ARGV[2], 'at', ARGV[1])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
redis.call('ZADD', KEYS[4], ARGV[1], ARGV[1])
redis.call('PEXPIRE', KEYS[4], ARGV[4])
return { 'claimed', attempts }
