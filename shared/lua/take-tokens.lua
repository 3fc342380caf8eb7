--[[
  Takes up to `want` send tokens from the global token bucket in one atomic
  step, for one of two lanes that share it:

  - campaign lane: capped by the campaign's own max rate, granted only while
    the campaign runs and the caller's segment lease is current, and never
    from the transactional reserve (TRANSACTIONAL_SHARE x burst tokens) nor
    while a transactional take is waiting;
  - transactional lane: any token in the bucket. When it gets fewer than it
    asked for, campaigns get nothing for the next 100 ms, so transactional
    sends have first claim on the refill.

  Both lanes draw from the same tokens, so together they never exceed the rate.

  KEYS[1] global bucket hash     { rate, burst, tokens, ts, granted, grantedTx, txWaitUntil }
  KEYS[2] lane hash              campaign hash { state, maxRate, capTokens, capTs } for 'c';
                                 unused for 't' (pass any key of the same hash tag)
  KEYS[3] campaign leases hash   segment index -> id of the pass that owns it ('c' only)
  ARGV[1] want                   tokens asked for (> 0)
  ARGV[2] default rate           sends/s, used only when the bucket has none yet
  ARGV[3] default burst          tokens, likewise
  ARGV[4] segment index          '' when the caller holds no segment lease
  ARGV[5] pass id                the caller's lease on that segment
  ARGV[6] lane                   'c' (campaign) or 't' (transactional)
  ARGV[7] transactional share    0..1

  Returns { granted, waitMs, state, rateMilli }
    granted    tokens taken (0..want); 0 whenever a campaign is not running
    waitMs     when granted < want: ms until the next whole token is due
    state      'superseded' when another pass has taken the segment over
               (checked first, whatever the campaign's state), else the
               campaign's state ('missing' when it has no hash);
               'running' for the transactional lane
    rateMilli  the effective rate x 1000 (Lua numbers become integers on return)

  Time comes from the Redis server, so worker clocks that disagree cannot
  mint extra tokens. The lease check fences a pass whose queue lock lapsed
  (a stalled worker): once another pass owns the segment, the old one gets no
  more tokens, so it can resend at most what it already had in flight.
]]
local lane = ARGV[6]
local state = 'running'
if lane == 'c' then
  -- The lease first: a superseded pass (its lock lapsed, or a second copy of the
  -- segment was delivered) must stop as superseded whatever the campaign's state.
  -- Told 'cancelled' instead, it would count its stale pending devices as dropped
  -- and finish the segment while the pass that owns it is still sending.
  if ARGV[4] ~= '' and redis.call('HGET', KEYS[3], ARGV[4]) ~= ARGV[5] then
    -- A campaign that is gone has no leases either: say it is missing.
    if redis.call('EXISTS', KEYS[2]) == 0 then
      return { 0, 0, 'missing', 0 }
    end
    return { 0, 0, 'superseded', 0 }
  end
  state = redis.call('HGET', KEYS[2], 'state')
  if state ~= 'running' then
    return { 0, 0, state or 'missing', 0 }
  end
end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local want = tonumber(ARGV[1])

local b = redis.call('HMGET', KEYS[1], 'rate', 'burst', 'tokens', 'ts', 'txWaitUntil')
local rate = tonumber(b[1])
local burst = tonumber(b[2])
if not rate or not burst then
  rate = tonumber(ARGV[2])
  burst = tonumber(ARGV[3])
  redis.call('HSET', KEYS[1], 'rate', rate, 'burst', burst)
end
local tokens = tonumber(b[3]) or burst
local ts = tonumber(b[4]) or now
if now > ts then
  tokens = math.min(burst, tokens + (now - ts) * rate / 1000)
end
local available = tokens
local effectiveRate = rate

local capTokens
if lane == 'c' then
  -- Never the whole burst: at a burst of 1 (any rate up to 20/s, the safe rate
  -- included) a reserve of ceil(share x 1) = 1 left campaigns no token at all.
  -- Transactional sends keep their first claim through txWaitUntil below.
  local reserve = math.min(math.ceil(tonumber(ARGV[7]) * burst), burst - 1)
  if (tonumber(b[5]) or 0) > now then
    reserve = burst
  end
  available = math.max(0, tokens - reserve)
  local c = redis.call('HMGET', KEYS[2], 'maxRate', 'capTokens', 'capTs')
  local maxRate = tonumber(c[1])
  if maxRate and maxRate > 0 then
    -- The campaign's cap is a bucket of its own, with the same 5% burst rule.
    local capBurst = math.max(1, math.ceil(maxRate * 0.05))
    capTokens = tonumber(c[2]) or capBurst
    local capTs = tonumber(c[3]) or now
    if now > capTs then
      capTokens = math.min(capBurst, capTokens + (now - capTs) * maxRate / 1000)
    end
    available = math.min(available, capTokens)
    effectiveRate = math.min(rate, maxRate)
  end
end

local granted = 0
if rate > 0 then
  granted = math.max(0, math.min(want, math.floor(available)))
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens - granted), 'ts', now)
if granted > 0 then
  redis.call('HINCRBY', KEYS[1], lane == 't' and 'grantedTx' or 'granted', granted)
end
if capTokens then
  redis.call('HSET', KEYS[2], 'capTokens', tostring(capTokens - granted), 'capTs', now)
end
if lane == 't' then
  redis.call('HSET', KEYS[1], 'txWaitUntil', granted < want and (now + 100) or 0)
end

local waitMs = 0
if granted < want then
  if effectiveRate > 0 then
    local missing = 1 - (available - granted)
    waitMs = math.max(1, math.ceil(missing * 1000 / effectiveRate))
  else
    waitMs = 1000
  end
end
return { granted, waitMs, state, math.floor(effectiveRate * 1000) }
