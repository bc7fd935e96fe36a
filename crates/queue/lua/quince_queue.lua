#!lua name=quince_queue
-- The queue's state machine. Every change of a job's state is one of these functions, so it
-- is atomic on any Redis 7 server (quince-server, the embedded quince Db, redis-server,
-- Valkey). Clients load this library with FUNCTION LOAD REPLACE when qq_version answers
-- another number (or nothing). docs/queue.md describes the layout and each transition.
--
-- KEYS[1] is the queue's base key, `qq:{NAME}`; every key of the queue is that base plus a
-- suffix, so all of them share one hash slot (the braces are a hash tag) and a cluster can
-- serve a queue from one node. Times are the server's (TIME), in milliseconds, so clients
-- with skewed clocks agree on leases and delays.

local VERSION = 1

-- A job's place in `ready`: higher priority first, then FIFO by sequence number. Scores are
-- doubles, exact up to 2^53: 2001 priorities times 2^42 sequence numbers fit.
local PRIORITY_MAX = 1000
local SEQ_SPAN = 4398046511104 -- 2^42
-- At most this many delayed jobs or expired leases are moved per call, so one call stays
-- short however large the backlog; the next call goes on.
local MOVE_MAX = 1000
local TRIM_MAX = 100
local EVENTS_MAXLEN = '10000'

local function num(s)
  return string.format('%.0f', s)
end

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function meta_number(base, field, default)
  local v = redis.call('HGET', base .. ':meta', field)
  if v then
    return tonumber(v)
  end
  return default
end

local function event(base, kind, id, extra_field, extra_value)
  if meta_number(base, 'events', 1) == 0 then
    return
  end
  if extra_field then
    redis.call('XADD', base .. ':events', 'MAXLEN', '~', EVENTS_MAXLEN, '*', 'event', kind, 'id', id,
      extra_field, extra_value)
  else
    redis.call('XADD', base .. ':events', 'MAXLEN', '~', EVENTS_MAXLEN, '*', 'event', kind, 'id', id)
  end
end

local function count(base, field, by)
  redis.call('HINCRBY', base .. ':meta', field, by or 1)
end

-- Wake one idle worker (they wait in BLPOP on this list). One element is enough: a worker
-- that fetched and left jobs behind signals again.
local function signal(base)
  local key = base .. ':signal'
  if redis.call('LLEN', key) == 0 then
    redis.call('RPUSH', key, '1')
  end
end

local function make_ready(base, id, job)
  redis.call('ZADD', base .. ':ready', redis.call('HGET', job, 'rank'), id)
  redis.call('HSET', job, 'state', 'ready')
end

-- Deletes finished jobs beyond the queue's retention limits (count and age) from `set`.
local function trim(base, set, keep_field, keep_default, age_field, age_default, now)
  local key = base .. ':' .. set
  local keep = meta_number(base, keep_field, keep_default)
  local doomed = {}
  if keep >= 0 then
    local excess = redis.call('ZCARD', key) - keep
    if excess > 0 then
      local popped = redis.call('ZPOPMIN', key, math.min(excess, TRIM_MAX))
      for i = 1, #popped, 2 do
        doomed[#doomed + 1] = popped[i]
      end
    end
  end
  local age = meta_number(base, age_field, age_default)
  if age > 0 then
    local old = redis.call('ZRANGEBYSCORE', key, '-inf', num(now - age), 'LIMIT', 0, TRIM_MAX)
    for _, id in ipairs(old) do
      redis.call('ZREM', key, id)
      doomed[#doomed + 1] = id
    end
  end
  for _, id in ipairs(doomed) do
    redis.call('DEL', base .. ':job:' .. id, base .. ':children:' .. id)
  end
end

local dead_letter

-- A parent finished: completed children lose one pending parent; a dead or cancelled
-- parent dead-letters its children, since they can never run as declared.
local function release_children(base, id, completed, now)
  local key = base .. ':children:' .. id
  local children = redis.call('SMEMBERS', key)
  for _, child in ipairs(children) do
    local job = base .. ':job:' .. child
    if redis.call('HGET', job, 'state') == 'blocked' then
      if completed then
        if redis.call('HINCRBY', job, 'pending', -1) <= 0 then
          redis.call('ZREM', base .. ':blocked', child)
          make_ready(base, child, job)
          signal(base)
        end
      else
        redis.call('ZREM', base .. ':blocked', child)
        dead_letter(base, child, job, 'parent ' .. id .. ' did not complete', now)
      end
    end
  end
  redis.call('DEL', key)
end

dead_letter = function(base, id, job, reason, now)
  redis.call('HSET', job, 'state', 'dead', 'error', reason, 'finished_ms', num(now), 'lease', '')
  redis.call('ZADD', base .. ':dead', num(now), id)
  count(base, 'dead_lettered')
  event(base, 'dead', id, 'error', reason)
  release_children(base, id, false, now)
  trim(base, 'dead', 'keep_dead', -1, 'keep_dead_ms', 0, now)
end

local function finish(base, id, job, state, now)
  redis.call('HSET', job, 'state', state, 'finished_ms', num(now), 'lease', '')
  redis.call('ZADD', base .. ':done', num(now), id)
  count(base, state)
  event(base, state, id)
  release_children(base, id, state == 'completed', now)
  trim(base, 'done', 'keep_done', 10000, 'keep_done_ms', 0, now)
end

-- Moves due delayed jobs to ready and takes back expired leases. Every fetch and heartbeat
-- does this, so a job held by a dead worker comes back without any separate process.
local function advance(base, now)
  local due = redis.call('ZRANGEBYSCORE', base .. ':delayed', '-inf', num(now), 'LIMIT', 0, MOVE_MAX)
  for _, id in ipairs(due) do
    redis.call('ZREM', base .. ':delayed', id)
    make_ready(base, id, base .. ':job:' .. id)
  end
  local expired = redis.call('ZRANGEBYSCORE', base .. ':active', '-inf', num(now), 'LIMIT', 0, MOVE_MAX)
  for _, id in ipairs(expired) do
    local job = base .. ':job:' .. id
    redis.call('ZREM', base .. ':active', id)
    local attempts = tonumber(redis.call('HGET', job, 'attempts'))
    local max_attempts = tonumber(redis.call('HGET', job, 'max_attempts'))
    count(base, 'expired')
    if redis.call('HGET', job, 'cancel') == '1' then
      finish(base, id, job, 'cancelled', now)
    elseif attempts >= max_attempts then
      dead_letter(base, id, job, 'lease expired on attempt ' .. attempts .. ' of ' .. max_attempts, now)
    else
      redis.call('HSET', job, 'lease', '', 'error', 'lease expired on attempt ' .. attempts)
      make_ready(base, id, job)
      event(base, 'expired', id)
    end
  end
  if #due > 0 or #expired > 0 then
    signal(base)
  end
end

local ENQUEUE_FIELDS = 11

-- Adds one job from args[at .. at+10]: type, payload, priority, delay_ms, at_ms,
-- max_attempts, timeout_ms, unique_key, unique_ttl_ms, parents (space-separated ids),
-- backoff_ms (the first retry's delay; workers double it per attempt).
-- Returns its id and 1, or the id of the job already holding the unique key and 0.
local function enqueue_one(base, args, at, now)
  local kind, payload = args[at], args[at + 1]
  local priority = tonumber(args[at + 2])
  local delay_ms, at_ms = tonumber(args[at + 3]), tonumber(args[at + 4])
  local max_attempts, timeout_ms = tonumber(args[at + 5]), tonumber(args[at + 6])
  local unique_key, unique_ttl_ms = args[at + 7], tonumber(args[at + 8])
  local parents, backoff_ms = args[at + 9], tonumber(args[at + 10]) or 0
  if not priority or priority < -PRIORITY_MAX or priority > PRIORITY_MAX then
    return redis.error_reply('ERR priority must be an integer from -1000 to 1000')
  end
  if not max_attempts or max_attempts < 1 then
    return redis.error_reply('ERR max_attempts must be at least 1')
  end
  local id = tostring(redis.call('INCR', base .. ':seq'))
  if unique_key ~= '' then
    local key = base .. ':unique:' .. unique_key
    local set
    if unique_ttl_ms and unique_ttl_ms > 0 then
      set = redis.call('SET', key, id, 'NX', 'PX', num(unique_ttl_ms))
    else
      set = redis.call('SET', key, id, 'NX')
    end
    if not set then
      return { redis.call('GET', key), 0 }
    end
  end
  local seq = tonumber(id) % SEQ_SPAN
  local rank = num((PRIORITY_MAX - priority) * SEQ_SPAN + seq)
  local job = base .. ':job:' .. id
  redis.call('HSET', job, 'id', id, 'type', kind, 'payload', payload, 'priority', priority,
    'rank', rank, 'attempts', 0, 'max_attempts', max_attempts, 'timeout_ms', timeout_ms or 0,
    'backoff_ms', backoff_ms, 'created_ms', num(now), 'unique', unique_key)
  count(base, 'enqueued')
  event(base, 'enqueued', id)
  local pending = 0
  for parent in string.gmatch(parents, '%S+') do
    local state = redis.call('HGET', base .. ':job:' .. parent, 'state')
    if state == 'dead' or state == 'cancelled' or (not state) then
      dead_letter(base, id, job, 'parent ' .. parent .. ' did not complete', now)
      return { id, 1 }
    end
    if state ~= 'completed' then
      redis.call('SADD', base .. ':children:' .. parent, id)
      pending = pending + 1
    end
  end
  local run_at = 0
  if at_ms and at_ms > 0 then
    run_at = at_ms
  elseif delay_ms and delay_ms > 0 then
    run_at = now + delay_ms
  end
  if pending > 0 then
    redis.call('HSET', job, 'state', 'blocked', 'pending', pending, 'run_at', num(run_at))
    redis.call('ZADD', base .. ':blocked', num(now), id)
  elseif run_at > now then
    redis.call('HSET', job, 'state', 'delayed', 'run_at', num(run_at))
    redis.call('ZADD', base .. ':delayed', num(run_at), id)
  else
    redis.call('HSET', job, 'state', 'ready')
    redis.call('ZADD', base .. ':ready', rank, id)
  end
  return { id, 1 }
end

-- qq_enqueue base | n, then n groups of ENQUEUE_FIELDS -> {id1, new1, id2, new2, ...}
local function qq_enqueue(keys, args)
  local base, now = keys[1], now_ms()
  local n = tonumber(args[1])
  if not n or n < 0 or #args ~= 1 + n * ENQUEUE_FIELDS then
    return redis.error_reply('ERR qq_enqueue: expected a count and ' .. ENQUEUE_FIELDS .. ' fields per job')
  end
  local out = {}
  for i = 0, n - 1 do
    local r = enqueue_one(base, args, 2 + i * ENQUEUE_FIELDS, now)
    if r.err then
      return r
    end
    out[#out + 1] = r[1]
    out[#out + 1] = r[2]
  end
  signal(base)
  return out
end

-- Leases up to `count` ready jobs to `worker` for lease_ms. Reply: {hint_ms, then per job
-- id, token, type, payload, attempts, max_attempts, timeout_ms, backoff_ms}. hint_ms says when to look
-- again if nothing was leased: until the next delayed job or the end of the rate window,
-- -1 if unknown, -2 if the queue is paused.
local function qq_fetch(keys, args)
  local base, now = keys[1], now_ms()
  local worker, want, lease_ms = args[1], tonumber(args[2]), tonumber(args[3])
  if not want or want < 0 or not lease_ms or lease_ms <= 0 then
    return redis.error_reply('ERR qq_fetch: bad count or lease')
  end
  advance(base, now)
  if redis.call('HGET', base .. ':meta', 'paused') == '1' then
    return { -2 }
  end
  local hint = -1
  local rate_max = meta_number(base, 'rate_max', 0)
  if rate_max > 0 then
    local rate_key = base .. ':rate'
    local used = tonumber(redis.call('GET', rate_key) or '0')
    if used >= rate_max then
      return { math.max(redis.call('PTTL', rate_key), 1) }
    end
    want = math.min(want, rate_max - used)
  end
  local popped = redis.call('ZPOPMIN', base .. ':ready', want)
  local out = { hint }
  local leased = 0
  for i = 1, #popped, 2 do
    local id = popped[i]
    local job = base .. ':job:' .. id
    local token = tostring(redis.call('INCR', base .. ':fence'))
    local until_ms = now + lease_ms
    local attempts = redis.call('HINCRBY', job, 'attempts', 1)
    redis.call('HSET', job, 'state', 'active', 'lease', token, 'lease_until', num(until_ms), 'worker', worker,
      'started_ms', num(now))
    redis.call('ZADD', base .. ':active', num(until_ms), id)
    local f = redis.call('HMGET', job, 'type', 'payload', 'max_attempts', 'timeout_ms', 'backoff_ms')
    out[#out + 1] = id
    out[#out + 1] = token
    out[#out + 1] = f[1]
    out[#out + 1] = f[2]
    out[#out + 1] = attempts
    out[#out + 1] = tonumber(f[3])
    out[#out + 1] = tonumber(f[4])
    out[#out + 1] = tonumber(f[5])
    leased = leased + 1
  end
  if leased > 0 and rate_max > 0 then
    local rate_key = base .. ':rate'
    if redis.call('INCRBY', rate_key, leased) == leased then
      redis.call('PEXPIRE', rate_key, meta_number(base, 'rate_ms', 1000))
    end
  end
  if leased > 0 then
    if redis.call('ZCARD', base .. ':ready') > 0 then
      signal(base)
    end
  else
    local next_due = redis.call('ZRANGE', base .. ':delayed', 0, 0, 'WITHSCORES')
    if next_due[2] then
      out[1] = math.max(tonumber(next_due[2]) - now, 1)
    end
  end
  return out
end

-- The job's hash key if `token` is its current, unexpired lease, else nil. An expired lease
-- is refused even before a fetch takes the job back, so no worker acts on one.
local function leased_job(base, id, token, now)
  local job = base .. ':job:' .. id
  local f = redis.call('HMGET', job, 'state', 'lease', 'lease_until')
  if f[1] == 'active' and f[2] == token and tonumber(f[3]) >= now then
    return job
  end
  return nil
end

-- qq_ack base | n, then n times id, token, result -> {1 if recorded, 0 if the lease was
-- stale, per job}. A stale ack is refused so a job is recorded as completed once.
local function qq_ack(keys, args)
  local base, now = keys[1], now_ms()
  local n = tonumber(args[1])
  if not n or #args ~= 1 + 3 * n then
    return redis.error_reply('ERR qq_ack: expected a count and id, token, result per job')
  end
  local out = {}
  for i = 0, n - 1 do
    local id, token, result = args[2 + 3 * i], args[3 + 3 * i], args[4 + 3 * i]
    local job = leased_job(base, id, token, now)
    if job then
      redis.call('ZREM', base .. ':active', id)
      redis.call('HSET', job, 'result', result)
      finish(base, id, job, 'completed', now)
      out[#out + 1] = 1
    else
      count(base, 'stale')
      out[#out + 1] = 0
    end
  end
  return out
end

-- qq_fail base | id, token, error, retry_delay_ms (-1: do not retry) -> 'retry', 'dead',
-- 'cancelled' or 'stale'.
local function qq_fail(keys, args)
  local base, now = keys[1], now_ms()
  local id, token, reason, delay = args[1], args[2], args[3], tonumber(args[4])
  local job = leased_job(base, id, token, now)
  if not job then
    count(base, 'stale')
    return 'stale'
  end
  redis.call('ZREM', base .. ':active', id)
  redis.call('HSET', job, 'lease', '', 'error', reason)
  count(base, 'failed')
  if redis.call('HGET', job, 'cancel') == '1' then
    finish(base, id, job, 'cancelled', now)
    return 'cancelled'
  end
  local attempts = tonumber(redis.call('HGET', job, 'attempts'))
  local max_attempts = tonumber(redis.call('HGET', job, 'max_attempts'))
  if delay and delay >= 0 and attempts < max_attempts then
    count(base, 'retried')
    event(base, 'retry', id, 'error', reason)
    if delay > 0 then
      redis.call('HSET', job, 'state', 'delayed', 'run_at', num(now + delay))
      redis.call('ZADD', base .. ':delayed', num(now + delay), id)
    else
      make_ready(base, id, job)
      signal(base)
    end
    return 'retry'
  end
  dead_letter(base, id, job, reason, now)
  return 'dead'
end

-- qq_heartbeat base | lease_ms, then id, token pairs -> per job 1 (extended), 0 (lease
-- lost: stop and do not ack), 2 (extended, but cancellation was requested).
local function qq_heartbeat(keys, args)
  local base, now = keys[1], now_ms()
  local lease_ms = tonumber(args[1])
  if not lease_ms or lease_ms <= 0 or #args % 2 ~= 1 then
    return redis.error_reply('ERR qq_heartbeat: expected lease_ms and id, token pairs')
  end
  local out = {}
  for i = 2, #args, 2 do
    local id, token = args[i], args[i + 1]
    local job = leased_job(base, id, token, now)
    if job then
      redis.call('HSET', job, 'lease_until', num(now + lease_ms))
      redis.call('ZADD', base .. ':active', num(now + lease_ms), id)
      if redis.call('HGET', job, 'cancel') == '1' then
        out[#out + 1] = 2
      else
        out[#out + 1] = 1
      end
    else
      out[#out + 1] = 0
    end
  end
  advance(base, now)
  return out
end

-- qq_release base | id, token pairs -> count released. Gives leased jobs back without
-- spending an attempt (a worker shutting down gracefully).
local function qq_release(keys, args)
  local base, now = keys[1], now_ms()
  local released = 0
  for i = 1, #args, 2 do
    local id, token = args[i], args[i + 1]
    local job = leased_job(base, id, token, now)
    if job then
      redis.call('ZREM', base .. ':active', id)
      redis.call('HINCRBY', job, 'attempts', -1)
      redis.call('HSET', job, 'lease', '')
      make_ready(base, id, job)
      event(base, 'released', id)
      released = released + 1
    end
  end
  if released > 0 then
    signal(base)
  end
  return released
end

-- qq_progress base | id, token, progress -> 1, or 0 if the lease is stale.
local function qq_progress(keys, args)
  local base, now = keys[1], now_ms()
  local job = leased_job(base, args[1], args[2], now)
  if not job then
    return 0
  end
  redis.call('HSET', job, 'progress', args[3])
  event(base, 'progress', args[1], 'progress', args[3])
  return 1
end

-- qq_cancel base | id -> 'cancelled' (it had not started), 'requested' (it is running: its
-- worker learns at the next heartbeat), 'finished' or 'missing'.
local function qq_cancel(keys, args)
  local base, now = keys[1], now_ms()
  local id = args[1]
  local job = base .. ':job:' .. id
  local state = redis.call('HGET', job, 'state')
  if not state then
    return 'missing'
  end
  if state == 'active' then
    redis.call('HSET', job, 'cancel', '1')
    event(base, 'cancel-requested', id)
    return 'requested'
  end
  local sets = { ready = 'ready', delayed = 'delayed', blocked = 'blocked' }
  if sets[state] then
    redis.call('ZREM', base .. ':' .. sets[state], id)
    finish(base, id, job, 'cancelled', now)
    return 'cancelled'
  end
  return 'finished'
end

local function set_paused(keys, value)
  redis.call('HSET', keys[1] .. ':meta', 'paused', value)
  event(keys[1], value == '1' and 'paused' or 'resumed', '')
  if value == '0' then
    signal(keys[1])
  end
  return 'OK'
end

local function qq_pause(keys)
  return set_paused(keys, '1')
end

local function qq_resume(keys)
  return set_paused(keys, '0')
end

-- Options stored in the queue's meta hash, with what each must be.
local OPTIONS = {
  rate_max = 0, rate_ms = 1, keep_done = -1, keep_done_ms = 0, keep_dead = -1, keep_dead_ms = 0, events = 0,
}

-- qq_configure base | field, value, ... -> 'OK'
local function qq_configure(keys, args)
  if #args % 2 ~= 0 then
    return redis.error_reply('ERR qq_configure: expected field, value pairs')
  end
  for i = 1, #args, 2 do
    local min = OPTIONS[args[i]]
    local v = tonumber(args[i + 1])
    if min == nil then
      return redis.error_reply('ERR qq_configure: unknown option ' .. args[i])
    end
    if not v or v < min or v ~= math.floor(v) then
      return redis.error_reply('ERR qq_configure: ' .. args[i] .. ' must be an integer >= ' .. min)
    end
  end
  for i = 1, #args, 2 do
    redis.call('HSET', keys[1] .. ':meta', args[i], args[i + 1])
  end
  return 'OK'
end

local COUNTERS = { 'enqueued', 'completed', 'failed', 'retried', 'expired', 'dead_lettered', 'cancelled', 'stale' }

-- qq_counts base -> flat {name, value, ...}: jobs per state, counters since creation,
-- and whether the queue is paused.
local function qq_counts(keys)
  local base = keys[1]
  local out = {}
  for _, set in ipairs({ 'ready', 'delayed', 'active', 'blocked', 'dead', 'done' }) do
    out[#out + 1] = set
    out[#out + 1] = redis.call('ZCARD', base .. ':' .. set)
  end
  local meta = redis.call('HMGET', base .. ':meta', 'paused', unpack(COUNTERS))
  out[#out + 1] = 'paused'
  out[#out + 1] = tonumber(meta[1] or '0')
  for i, name in ipairs(COUNTERS) do
    out[#out + 1] = name
    out[#out + 1] = tonumber(meta[i + 1] or '0')
  end
  return out
end

-- qq_job base | id -> the job's fields as a flat array (empty if there is no such job).
local function qq_job(keys, args)
  return redis.call('HGETALL', keys[1] .. ':job:' .. args[1])
end

local STATE_SETS = { ready = true, delayed = true, active = true, blocked = true, dead = true, done = true }

-- qq_list base | set, offset, count -> ids in the set, oldest (or first to run) first.
local function qq_list(keys, args)
  if not STATE_SETS[args[1]] then
    return redis.error_reply('ERR qq_list: no such set ' .. tostring(args[1]))
  end
  local offset, n = tonumber(args[2]), tonumber(args[3])
  if not offset or not n or offset < 0 or n < 1 then
    return redis.error_reply('ERR qq_list: bad offset or count')
  end
  return redis.call('ZRANGE', keys[1] .. ':' .. args[1], offset, offset + n - 1)
end

-- The ids to act on: those given, or (with none given) up to `limit` of the oldest.
local function dead_ids(base, args)
  if #args > 1 then
    local ids = {}
    for i = 2, #args do
      ids[#ids + 1] = args[i]
    end
    return ids
  end
  return redis.call('ZRANGE', base .. ':dead', 0, tonumber(args[1]) - 1)
end

-- qq_dead_retry base | limit [id ...] -> count moved back to ready, attempts reset.
local function qq_dead_retry(keys, args)
  local base = keys[1]
  local moved = 0
  for _, id in ipairs(dead_ids(base, args)) do
    if redis.call('ZREM', base .. ':dead', id) == 1 then
      local job = base .. ':job:' .. id
      redis.call('HSET', job, 'attempts', 0, 'cancel', '0')
      make_ready(base, id, job)
      event(base, 'revived', id)
      moved = moved + 1
    end
  end
  if moved > 0 then
    signal(base)
  end
  return moved
end

-- qq_dead_purge base | limit [id ...] -> count deleted.
local function qq_dead_purge(keys, args)
  local base = keys[1]
  local purged = 0
  for _, id in ipairs(dead_ids(base, args)) do
    if redis.call('ZREM', base .. ':dead', id) == 1 then
      redis.call('DEL', base .. ':job:' .. id)
      purged = purged + 1
    end
  end
  return purged
end

-- qq_schedule base | name, tick_ms, then one job's ENQUEUE_FIELDS -> the new job's id, or
-- nil if this tick (or a later one) of the schedule was already enqueued. Any number of
-- scheduler instances may call it for the same tick: exactly one job results.
local function qq_schedule(keys, args)
  local base, now = keys[1], now_ms()
  local name, tick = args[1], tonumber(args[2])
  if not tick or #args ~= 2 + ENQUEUE_FIELDS then
    return redis.error_reply('ERR qq_schedule: expected name, tick_ms and one job')
  end
  local last = redis.call('HGET', base .. ':schedules', name)
  if last and tonumber(last) >= tick then
    return false
  end
  redis.call('HSET', base .. ':schedules', name, num(tick))
  local r = enqueue_one(base, args, 3, now)
  if r.err then
    return r
  end
  signal(base)
  return r[1]
end

local function qq_version()
  return VERSION
end

local function qq_time()
  return now_ms()
end

local function register(name, fn, read_only)
  if read_only then
    redis.register_function { function_name = name, callback = fn, flags = { 'no-writes' } }
  else
    redis.register_function(name, fn)
  end
end

register('qq_version', qq_version, true)
register('qq_time', qq_time, true)
register('qq_enqueue', qq_enqueue)
register('qq_fetch', qq_fetch)
register('qq_ack', qq_ack)
register('qq_fail', qq_fail)
register('qq_heartbeat', qq_heartbeat)
register('qq_release', qq_release)
register('qq_progress', qq_progress)
register('qq_cancel', qq_cancel)
register('qq_pause', qq_pause)
register('qq_resume', qq_resume)
register('qq_configure', qq_configure)
register('qq_counts', qq_counts, true)
register('qq_job', qq_job, true)
register('qq_list', qq_list, true)
register('qq_dead_retry', qq_dead_retry)
register('qq_dead_purge', qq_dead_purge)
register('qq_schedule', qq_schedule)
