/**
 * Lua the engine runs in Redis. Each script is atomic, so a state change, its
 * checks and its events can never be seen half done.
 */

/**
 * Applies one commit (see commit.ts). KEYS[1] the run's event sequence,
 * KEYS[2] the run's event stream, KEYS[3] the all-runs stream, KEYS[4..] the
 * keys the ops touch. ARGV[1] is the JSON commit.
 *
 * - Replay guard: after a reconnect ioredis resends commands that got no
 *   reply; a commit that already landed finds its id in the marker hash's
 *   `_commit` field and returns 2 without touching anything.
 * - Every required op's checks run before anything is written: one failing
 *   check aborts the whole commit and returns {0, op index}.
 * - A soft op applies only where its own checks pass (e.g. "cancel if not yet
 *   ended"); events tied to it are appended only when it applied.
 * - With \`ul\`/\`ut\`, an applied commit also releases the run's advance mutex
 *   (compare-and-delete), saving the advancer a round trip.
 * - Each event takes the next value of the run's sequence and is added to the
 *   run stream with the explicit id `<seq>-0` (gap-free: INCR and XADD happen
 *   in the same script) and to the capped all-runs stream with an automatic id.
 */
export const COMMIT_LUA = `
local p = cjson.decode(ARGV[1])
if p.mk then
  if redis.call('HGET', KEYS[p.mk], '_commit') == p.id then return {2} end
end
local function passes(op)
  if not op.c then return true end
  for _, c in ipairs(op.c) do
    local v = redis.call('HGET', KEYS[op.k], c[1])
    local mode = c[2]
    if mode == 'set' then
      if not v then return false end
    elseif mode == 'unset' then
      if v then return false end
    else
      local hit = false
      for i = 3, #c do
        if v == c[i] then hit = true break end
      end
      if mode == 'in' and not hit then return false end
      if mode == 'nin' and hit then return false end
    end
  end
  return true
end
for i, op in ipairs(p.ops) do
  if op.t == 'h' and not op.soft and not passes(op) then return {0, i} end
end
local applied = {}
for i, op in ipairs(p.ops) do
  local ok = true
  if op.t == 'h' then
    if op.soft then ok = passes(op) end
    if ok then
      if op.s and #op.s > 0 then redis.call('HSET', KEYS[op.k], unpack(op.s)) end
      if op.d and #op.d > 0 then redis.call('HDEL', KEYS[op.k], unpack(op.d)) end
    end
  elseif op.t == 'sadd' then
    redis.call('SADD', KEYS[op.k], op.m)
  elseif op.t == 'srem' then
    redis.call('SREM', KEYS[op.k], op.m)
  elseif op.t == 'zadd' then
    redis.call('ZADD', KEYS[op.k], op.score, op.m)
  end
  applied[i] = ok
end
if p.mk then redis.call('HSET', KEYS[p.mk], '_commit', p.id) end
if p.ul and redis.call('GET', KEYS[p.ul]) == p.ut then redis.call('DEL', KEYS[p.ul]) end
local softs = {}
for i, op in ipairs(p.ops) do
  if op.soft then table.insert(softs, applied[i] and 1 or 0) end
end
local last = 0
for _, ev in ipairs(p.ev) do
  if ev.op == nil or applied[ev.op] then
    local seq = redis.call('INCR', KEYS[1])
    local body = '{"seq":' .. seq .. ',' .. ev.j
    redis.call('XADD', KEYS[2], seq .. '-0', 'e', body)
    redis.call('XADD', KEYS[3], 'MAXLEN', '~', p.cap, '*', 'e', body)
    last = seq
  end
end
return {1, last, softs}
`;

/** Releases a mutex only if this holder still owns it (KEYS[1] lock, ARGV[1] token). */
export const UNLOCK_LUA = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

/**
 * Loads what the scheduler needs in one round trip, optionally taking the
 * run's advance mutex first. KEYS[1] run hash, KEYS[2] mutex, KEYS[3..] stage
 * hashes in pipeline order. ARGV[1] mutex token ('' = do not lock), ARGV[2]
 * its TTL (ms), ARGV[3] JSON: for each stage, the 1-based indexes of its parents.
 *
 * Returns {0} when the mutex is held by someone else; otherwise
 * {1, runState, state1, attempt1, reason1, ..., then pairs (index, envelope)}
 * with the envelopes of successful parents of pending stages whose parents
 * have all ended: the only outputs a plan can read.
 */
export const LOAD_PLAN_LUA = `
if ARGV[1] ~= '' then
  if not redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[2]) then return {0} end
end
local ended = { success = true, failed = true, timed_out = true, cancelled = true, skipped = true }
local parents = cjson.decode(ARGV[3])
local n = #KEYS - 2
local states = {}
local out = { 1, redis.call('HGET', KEYS[1], 'state') }
for i = 1, n do
  local v = redis.call('HMGET', KEYS[i + 2], 'state', 'attempt', 'reason')
  states[i] = v[1]
  out[#out + 1] = v[1]
  out[#out + 1] = v[2]
  out[#out + 1] = v[3]
end
local need = {}
for i = 1, n do
  if states[i] == 'pending' then
    local all = true
    for _, p in ipairs(parents[i]) do
      if not ended[states[p]] then all = false break end
    end
    if all then
      for _, p in ipairs(parents[i]) do
        if states[p] == 'success' then need[p] = true end
      end
    end
  end
end
for i = 1, n do
  if need[i] then
    out[#out + 1] = i
    out[#out + 1] = redis.call('HGET', KEYS[i + 2], 'envelope')
  end
end
return out
`;
