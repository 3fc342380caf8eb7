--[[
  Creates a campaign, but never over an existing one. A scheduler that stalled past its
  claim on a fire may try to create the fire's campaign (same derived id) after another
  scheduler launched it: overwriting would reset the good campaign's counters, state and
  enqueued flag, so the late create must find the id taken and change nothing.

  KEYS[1] campaign hash
  KEYS[2] campaigns        sorted set of every campaign id, scored by creation ms
  KEYS[3] active campaigns set of the ids of campaigns not finished yet
  ARGV[1] campaign id
  ARGV[2] created at ms
  ARGV[3..] field, value, field, value, ... of the campaign hash

  Returns 1 when created, 0 when a campaign with this id already exists.
]]
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
redis.call('HSET', KEYS[1], unpack(ARGV, 3))
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
redis.call('SADD', KEYS[3], ARGV[1])
return 1
