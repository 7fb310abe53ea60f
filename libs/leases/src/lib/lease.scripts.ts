import { createHash } from 'node:crypto';
import type Redis from 'ioredis';

/**
 * The lease's Lua scripts. Each runs atomically on the one Redis, which is
 * what makes the rules hold without a distributed lock:
 *
 * - one holder: the lease hash is written only when it does not exist (the
 *   `SET NX` of the design, done inside the script), and deleted only by a
 *   compare on the holder's run id (and token, for reclaim);
 * - a free lease has an empty queue: every script that can free the lease
 *   ends with `promote`, which hands it to the queue's head in the same
 *   script, so no newcomer can slip in between a release and the handoff;
 *   `acquire` also promotes first, so even a state left by hand (lease key
 *   deleted under waiters) serves the queue before a newcomer;
 * - every grant INCRs the fence counter and is PUBLISHed with its token;
 * - the index holds `scope/profile` while the lease has a holder or waiters.
 *
 * KEYS (all scripts): lease hash, queue zset, since hash, fence counter, index set.
 * ARGV 1-4 (all scripts): index member, channel, scope, profile.
 */
const PRELUDE = `
local LEASE, QUEUE, SINCE, FENCE, INDEX = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local MEMBER, CHANNEL, SCOPE, PROFILE = ARGV[1], ARGV[2], ARGV[3], ARGV[4]

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function grant(run_id, via)
  local token = redis.call('INCR', FENCE)
  local since = now_ms()
  redis.call('HSET', LEASE, 'runId', run_id, 'token', token, 'since', since)
  redis.call('SADD', INDEX, MEMBER)
  redis.call('PUBLISH', CHANNEL, cjson.encode({
    type = 'granted', scope = SCOPE, profile = PROFILE, runId = run_id, token = token, since = since, via = via }))
  return token, since
end

-- A free lease with waiters goes to the head at once.
local function promote(via)
  if redis.call('EXISTS', LEASE) == 1 then return false end
  local head = redis.call('ZRANGE', QUEUE, 0, 0)[1]
  if not head then return false end
  redis.call('ZREM', QUEUE, head)
  redis.call('HDEL', SINCE, head)
  grant(head, via)
  return head
end

local function tidy()
  if redis.call('EXISTS', LEASE) == 0 and redis.call('ZCARD', QUEUE) == 0 then
    redis.call('SREM', INDEX, MEMBER)
    redis.call('DEL', SINCE)
  end
end
`;

/**
 * ARGV[5] run id.
 * Reply: {'granted', token, since} | {'queued', position, ticket, holderRun, holderToken, holderSince, since}.
 * Idempotent: the holder gets its grant back; a waiter keeps its ticket.
 */
const ACQUIRE = `${PRELUDE}
local RUN = ARGV[5]
promote('handoff')
local h = redis.call('HMGET', LEASE, 'runId', 'token', 'since')
if h[1] == RUN then return {'granted', tonumber(h[2]), tonumber(h[3])} end
if not h[1] then
  local token, since = grant(RUN, 'acquire')
  return {'granted', token, since}
end
local ticket = redis.call('ZSCORE', QUEUE, RUN)
if not ticket then
  ticket = redis.call('INCR', FENCE)
  redis.call('ZADD', QUEUE, ticket, RUN)
  redis.call('HSET', SINCE, RUN, now_ms())
  redis.call('SADD', INDEX, MEMBER)
end
local rank = redis.call('ZRANK', QUEUE, RUN)
return {'queued', rank + 1, tonumber(ticket), h[1], tonumber(h[2]), tonumber(h[3]), tonumber(redis.call('HGET', SINCE, RUN))}
`;

/**
 * ARGV[5] run id, ARGV[6] token ('' = any), ARGV[7] how the next holder is served ('handoff' | 'reclaim').
 * Compare-and-release, then hand over to the queue's head.
 * Reply: {0} (not the holder) | {1} (released, nobody waits) | {1, nextRun, nextToken, nextSince}.
 */
const RELEASE = `${PRELUDE}
local h = redis.call('HMGET', LEASE, 'runId', 'token')
if h[1] ~= ARGV[5] or (ARGV[6] ~= '' and h[2] ~= ARGV[6]) then return {0} end
redis.call('DEL', LEASE)
local nxt = promote(ARGV[7])
tidy()
if not nxt then return {1} end
local n = redis.call('HMGET', LEASE, 'runId', 'token', 'since')
return {1, n[1], tonumber(n[2]), tonumber(n[3])}
`;

/**
 * ARGV[5] run id. Leaves the queue (a holder is not affected).
 * Reply: 1 when the run was waiting, else 0.
 */
const WITHDRAW = `${PRELUDE}
local removed = redis.call('ZREM', QUEUE, ARGV[5])
redis.call('HDEL', SINCE, ARGV[5])
promote('handoff')
tidy()
return removed
`;

/**
 * ARGV[5] dead holder ('' = none), ARGV[6] its token, ARGV[7..] dead waiters.
 * Releases the holder only if it still holds with that token (its own release
 * or an earlier reclaim may have won), drops the dead waiters, then serves the head.
 * Reply: {released 0|1, holderRun|'', holderToken|0, holderSince|0, removed...}.
 */
const RECLAIM = `${PRELUDE}
local released = 0
if ARGV[5] ~= '' then
  local h = redis.call('HMGET', LEASE, 'runId', 'token')
  if h[1] == ARGV[5] and h[2] == ARGV[6] then
    redis.call('DEL', LEASE)
    released = 1
  end
end
local reply = {released, '', 0, 0}
for i = 7, #ARGV do
  if redis.call('ZREM', QUEUE, ARGV[i]) == 1 then
    redis.call('HDEL', SINCE, ARGV[i])
    reply[#reply + 1] = ARGV[i]
  end
end
promote('reclaim')
tidy()
local n = redis.call('HMGET', LEASE, 'runId', 'token', 'since')
if n[1] then
  reply[2], reply[3], reply[4] = n[1], tonumber(n[2]), tonumber(n[3])
end
return reply
`;

/**
 * ARGV[5] check holder id. Takes a free lease for a profile check, never queues:
 * an operator pressed a button and wants an answer, not a place in line.
 * Not published: nobody waits for a check's grant, and the engine's grant
 * listeners would take an id they do not know for a run that ended.
 * Reply: {'granted', token, since} | {'busy', holderRun, holderToken, holderSince}.
 */
const HOLD_FOR_CHECK = `${PRELUDE}
local RUN = ARGV[5]
promote('handoff')
local h = redis.call('HMGET', LEASE, 'runId', 'token', 'since')
if h[1] then return {'busy', h[1], tonumber(h[2]), tonumber(h[3])} end
local token = redis.call('INCR', FENCE)
local since = now_ms()
redis.call('HSET', LEASE, 'runId', RUN, 'token', token, 'since', since)
redis.call('SADD', INDEX, MEMBER)
return {'granted', token, since}
`;

/** A script run by SHA, loaded on first use (and again after a Redis restart or SCRIPT FLUSH). */
export class LeaseScript {
  private readonly sha: string;

  constructor(
    readonly name: string,
    private readonly source: string,
  ) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  async run(redis: Redis, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    try {
      return await redis.evalsha(this.sha, keys.length, ...keys, ...args);
    } catch (err) {
      if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
      return redis.eval(this.source, keys.length, ...keys, ...args);
    }
  }
}

export const LEASE_SCRIPTS = {
  acquire: new LeaseScript('acquire', ACQUIRE),
  release: new LeaseScript('release', RELEASE),
  withdraw: new LeaseScript('withdraw', WITHDRAW),
  reclaim: new LeaseScript('reclaim', RECLAIM),
  holdForCheck: new LeaseScript('holdForCheck', HOLD_FOR_CHECK),
} as const;
