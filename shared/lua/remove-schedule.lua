--[[
  Removes a schedule: its hash, its list of fires, its id, and the records of its fires,
  except a fire being launched right now (its lease is live). That launch completes:
  its campaign may already be part-way through enqueueing, and stopping it would fail a
  campaign that has started sending. Its scheduler records the outcome, which, the
  schedule being gone, deletes the record and the lease (finish-fire.lua). No fire after
  the remove is launched: claiming a fire needs the schedule (claim-fire.lua).

  KEYS[1] schedule hash
  KEYS[2] fire list          sorted set of the schedule's recent fire instants
  KEYS[3] schedule ids       sorted set of every schedule
  KEYS[4..] pairs: a fire's hash, then its lease, for each fire in the list
  ARGV[1] schedule id

  Returns the instants of the fires left launching (their records are kept), or -1
  when the schedule does not exist.
]]
if redis.call('EXISTS', KEYS[1]) == 0 then
  return -1
end
local launching = {}
for i = 4, #KEYS, 2 do
  if redis.call('EXISTS', KEYS[i + 1]) == 1 then
    table.insert(launching, redis.call('HGET', KEYS[i], 'at') or '')
  else
    redis.call('DEL', KEYS[i])
  end
end
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('ZREM', KEYS[3], ARGV[1])
return launching
