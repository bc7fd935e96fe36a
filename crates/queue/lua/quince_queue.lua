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
--
-- PERF: the hot paths (enqueue, fetch, ack) make about two commands per job; everything
-- else (set changes, counters, events) is batched per call. Arguments to redis.call are
-- passed as strings: a Lua number costs a printf on every call.

local VERSION = '2'

-- A job's place in `ready`: higher priority first, then FIFO by sequence number. Scores are
-- doubles, exact up to 2^53: 2001 priorities times 2^42 sequence numbers fit.
local PRIORITY_MAX = 1000
local SEQ_SPAN = 4398046511104 -- 2^42
-- At most this many delayed jobs or expired leases are moved per call, so one call stays
-- short however large the backlog; the next call goes on.
local MOVE_MAX = 1000
local TRIM_MAX = 1000
local EVENTS_MAXLEN = '10000'
-- Redis's Lua takes at most 8000 arguments in one call (LUAI_MAXCSTACK): batched commands
-- send at most this many per call.
local CHUNK = 2000

local function num(s)
  return string.format('%.0f', s)
end

local SETTINGS = { 'paused', 'rate_max', 'rate_ms', 'keep_done', 'keep_done_ms', 'keep_dead', 'keep_dead_ms', 'events' }
local DEFAULTS = { paused = 0, rate_max = 0, rate_ms = 1000, keep_done = 10000, keep_done_ms = 0, keep_dead = -1,
  keep_dead_ms = 0, events = 1 }

-- One call's context: the queue's base key, the time (number and string), the settings
-- (read once) and what the call batches until `flush`: set changes, counters, events.
local function context(keys)
  local base = keys[1]
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  local ctx = { base = base, now = now, now_s = num(now), counts = {}, zadd = {}, zrem = {}, ev = {}, signal = false }
  local values = redis.call('HMGET', base .. ':meta', unpack(SETTINGS))
  for i, name in ipairs(SETTINGS) do
    ctx[name] = tonumber(values[i]) or DEFAULTS[name]
  end
  return ctx
end

local function push(ctx, list, key, ...)
  local pending = ctx[list][key]
  if not pending then
    pending = {}
    ctx[list][key] = pending
  end
  for _, v in ipairs({ ... }) do
    pending[#pending + 1] = v
  end
end

local function count(ctx, field, by)
  ctx.counts[field] = (ctx.counts[field] or 0) + (by or 1)
end

local function zadd(ctx, set, score, id)
  push(ctx, 'zadd', set, score, id)
end

local function zrem(ctx, set, id)
  push(ctx, 'zrem', set, id)
end

-- Events go to the stream `base:events`, one entry per kind per call: `event KIND ids "1 2
-- 3"` (and `error` for a single dead letter or retry).
local function event(ctx, kind, id)
  if ctx.events ~= 0 then
    push(ctx, 'ev', kind, id)
  end
end

local function chunked(command, key, items, step)
  for i = 1, #items, step do
    redis.call(command, key, unpack(items, i, math.min(i + step - 1, #items)))
  end
end

-- Deletes finished jobs beyond the queue's retention limits (count and age) from `set`.
local function trim(ctx, set, keep, age)
  local key = ctx.base .. ':' .. set
  local doomed = {}
  if keep >= 0 then
    local excess = redis.call('ZCARD', key) - keep
    if excess > 0 then
      local popped = redis.call('ZPOPMIN', key, math.min(excess, TRIM_MAX))
      for i = 1, #popped, 2 do
        doomed[#doomed + 1] = ctx.base .. ':job:' .. popped[i]
      end
    end
  end
  if age > 0 then
    local old = redis.call('ZRANGEBYSCORE', key, '-inf', num(ctx.now - age), 'LIMIT', 0, TRIM_MAX)
    if #old > 0 then
      chunked('ZREM', key, old, CHUNK)
      for _, id in ipairs(old) do
        doomed[#doomed + 1] = ctx.base .. ':job:' .. id
      end
    end
  end
  for i = 1, #doomed, CHUNK do
    redis.call('DEL', unpack(doomed, i, math.min(i + CHUNK - 1, #doomed)))
  end
end

-- Applies what the call batched. Removals go first: a job may leave a set and come back
-- to it in one call.
local function flush(ctx)
  local base = ctx.base
  for set, ids in pairs(ctx.zrem) do
    chunked('ZREM', base .. ':' .. set, ids, CHUNK)
  end
  for set, pairs_ in pairs(ctx.zadd) do
    chunked('ZADD', base .. ':' .. set, pairs_, CHUNK)
  end
  for field, by in pairs(ctx.counts) do
    redis.call('HINCRBY', base .. ':meta', field, tostring(by))
  end
  if ctx.events ~= 0 then
    for kind, ids in pairs(ctx.ev) do
      redis.call('XADD', base .. ':events', 'MAXLEN', '~', EVENTS_MAXLEN, '*', 'event', kind, 'ids',
        table.concat(ids, ' '))
    end
  end
  if ctx.zadd.done then
    trim(ctx, 'done', ctx.keep_done, ctx.keep_done_ms)
  end
  if ctx.zadd.dead then
    trim(ctx, 'dead', ctx.keep_dead, ctx.keep_dead_ms)
  end
  -- Wake one idle worker (they wait in BLPOP on this list). One element is enough: a
  -- worker that fetched and left jobs behind signals again.
  if ctx.signal then
    local key = base .. ':signal'
    if redis.call('LLEN', key) == 0 then
      redis.call('RPUSH', key, '1')
    end
  end
  ctx.zadd, ctx.zrem, ctx.counts, ctx.ev = {}, {}, {}, {}
end

local function make_ready(ctx, id, job, rank)
  zadd(ctx, 'ready', rank or redis.call('HGET', job, 'rank'), id)
  redis.call('HSET', job, 'state', 'ready')
  ctx.signal = true
end

-- A lease is the member `ID:TOKEN` of `active`, scored by the time it runs out; TOKEN is
-- `FENCE:WORKER`, FENCE a number that is never reused. The client holds ID and TOKEN, so
-- checking a lease is one ZSCORE, and a lease that was taken back cannot match again.
-- INVARIANT: a job whose state is `ready` but that is not in `ready` is leased (fetch
-- takes it from `ready` without rewriting its hash).
local function lease_member(id, token)
  return id .. ':' .. token
end

local function lease_id(member)
  return string.sub(member, 1, string.find(member, ':', 1, true) - 1)
end

-- Whether job `id`, whose hash says `state`, is leased (the INVARIANT above).
local function is_leased(base, id, state)
  return state == 'ready' and not redis.call('ZSCORE', base .. ':ready', id)
end

-- The current lease member of a leased job `id` (a scan of `active`, which holds one member
-- per running job).
local function lease_of(base, id)
  local prefix = id .. ':'
  for _, member in ipairs(redis.call('ZRANGE', base .. ':active', 0, -1)) do
    if string.sub(member, 1, #prefix) == prefix then
      return member
    end
  end
  return nil
end

-- Whether `member` is a current, unexpired lease. An expired lease is refused even before a
-- fetch takes the job back, so no worker acts on one.
local function lease_valid(ctx, score)
  return score and tonumber(score) >= ctx.now
end

local function leased_job(ctx, id, token)
  local member = lease_member(id, token)
  if lease_valid(ctx, redis.call('ZSCORE', ctx.base .. ':active', member)) then
    return ctx.base .. ':job:' .. id, member
  end
  return nil
end

-- "max_attempts timeout_ms backoff_ms" as the client sent them.
local function max_attempts_of(opts)
  return tonumber(string.match(opts or '', '^%d+')) or 1
end

local dead_letter

-- A parent finished: its children lose one pending parent; a dead or cancelled parent
-- dead-letters its children, since they can never run as declared.
local function release_children(ctx, id, completed)
  local key = ctx.base .. ':children:' .. id
  for _, child in ipairs(redis.call('SMEMBERS', key)) do
    local job = ctx.base .. ':job:' .. child
    if redis.call('HGET', job, 'state') == 'blocked' then
      zrem(ctx, 'blocked', child)
      if not completed then
        dead_letter(ctx, child, job, 'parent ' .. id .. ' did not complete')
      elseif redis.call('HINCRBY', job, 'pending', '-1') <= 0 then
        make_ready(ctx, child, job)
      end
    end
  end
  redis.call('DEL', key)
  redis.call('SREM', ctx.base .. ':parents', id)
end

dead_letter = function(ctx, id, job, reason)
  redis.call('HSET', job, 'state', 'dead', 'error', reason, 'finished_ms', ctx.now_s)
  zadd(ctx, 'dead', ctx.now_s, id)
  count(ctx, 'dead_lettered')
  event(ctx, 'dead', id)
  if redis.call('SISMEMBER', ctx.base .. ':parents', id) == 1 then
    release_children(ctx, id, false)
  end
end

-- Records a job as completed or cancelled. `has_children`: nil to look it up.
local function finish(ctx, id, job, state, result, has_children)
  if result then
    redis.call('HSET', job, 'state', state, 'finished_ms', ctx.now_s, 'result', result)
  else
    redis.call('HSET', job, 'state', state, 'finished_ms', ctx.now_s)
  end
  zadd(ctx, 'done', ctx.now_s, id)
  count(ctx, state)
  event(ctx, state, id)
  if has_children == nil then
    has_children = redis.call('SISMEMBER', ctx.base .. ':parents', id) == 1
  end
  if has_children then
    release_children(ctx, id, state == 'completed')
  end
end

-- Moves due delayed jobs to ready and takes back expired leases. Every fetch and heartbeat
-- does this, so a job held by a dead worker comes back without any separate process.
local function advance(ctx)
  local base = ctx.base
  local due = redis.call('ZRANGEBYSCORE', base .. ':delayed', '-inf', ctx.now_s, 'LIMIT', 0, MOVE_MAX)
  for _, id in ipairs(due) do
    zrem(ctx, 'delayed', id)
    make_ready(ctx, id, base .. ':job:' .. id)
  end
  local expired = redis.call('ZRANGEBYSCORE', base .. ':active', '-inf', '(' .. ctx.now_s, 'LIMIT', 0, MOVE_MAX)
  for _, member in ipairs(expired) do
    local id = lease_id(member)
    local job = base .. ':job:' .. id
    zrem(ctx, 'active', member)
    local f = redis.call('HMGET', job, 'attempts', 'opts', 'cancel')
    -- The lost lease spent an attempt.
    local attempts, max_attempts = (tonumber(f[1]) or 0) + 1, max_attempts_of(f[2])
    redis.call('HSET', job, 'attempts', tostring(attempts))
    count(ctx, 'expired')
    if f[3] == '1' then
      finish(ctx, id, job, 'cancelled')
    elseif attempts >= max_attempts then
      dead_letter(ctx, id, job, 'lease expired on attempt ' .. attempts .. ' of ' .. max_attempts)
    else
      redis.call('HSET', job, 'error', 'lease expired on attempt ' .. attempts)
      make_ready(ctx, id, job)
      event(ctx, 'expired', id)
    end
  end
  -- What advance changed must land before the caller reads the sets.
  if #due > 0 or #expired > 0 then
    flush(ctx)
  end
end

local ENQUEUE_FIELDS = 11

-- Why the job at args[at] cannot be enqueued, or nil. Checked for a whole batch before
-- anything is written, so a bad job leaves no trace.
local function job_error(args, at)
  local priority, max_attempts = tonumber(args[at + 2]), tonumber(args[at + 5])
  if not priority or priority < -PRIORITY_MAX or priority > PRIORITY_MAX or priority ~= math.floor(priority) then
    return 'ERR priority must be an integer from -1000 to 1000'
  end
  if not max_attempts or max_attempts < 1 or max_attempts ~= math.floor(max_attempts) then
    return 'ERR max_attempts must be an integer of at least 1'
  end
  for _, i in ipairs({ 3, 4, 6, 8, 10 }) do
    local v = tonumber(args[at + i])
    if not v or v < 0 or v ~= math.floor(v) then
      return 'ERR job field ' .. (i + 1) .. ' must be a non-negative integer'
    end
  end
  return nil
end

-- Adds the job with id `id` from args[at .. at+10]: type, payload, priority, delay_ms,
-- at_ms, max_attempts, timeout_ms, unique_key, unique_ttl_ms, parents (space-separated
-- ids), backoff_ms (the first retry's delay; workers double it per attempt). Returns its
-- id and 1, or the id of the job already holding the unique key and 0.
local function enqueue_one(ctx, id, args, at)
  local base, now = ctx.base, ctx.now
  local unique_key, parents = args[at + 7], args[at + 9]
  if unique_key ~= '' then
    local key = base .. ':unique:' .. unique_key
    local set
    if args[at + 8] ~= '0' then
      set = redis.call('SET', key, id, 'NX', 'PX', args[at + 8])
    else
      set = redis.call('SET', key, id, 'NX')
    end
    if not set then
      return redis.call('GET', key), 0
    end
  end
  local rank = num((PRIORITY_MAX - tonumber(args[at + 2])) * SEQ_SPAN + tonumber(id) % SEQ_SPAN)
  local job = base .. ':job:' .. id
  local run_at = tonumber(args[at + 4])
  if run_at == 0 and args[at + 3] ~= '0' then
    run_at = now + tonumber(args[at + 3])
  end
  local pending, dead_parent = 0, nil
  if parents ~= '' then
    for parent in string.gmatch(parents, '%S+') do
      local state = redis.call('HGET', base .. ':job:' .. parent, 'state')
      if state == 'dead' or state == 'cancelled' or not state then
        dead_parent = parent
        break
      end
      if state ~= 'completed' then
        redis.call('SADD', base .. ':children:' .. parent, id)
        redis.call('SADD', base .. ':parents', parent)
        pending = pending + 1
      end
    end
  end
  local state = 'ready'
  if pending > 0 then
    state = 'blocked'
  elseif run_at > now then
    state = 'delayed'
  end
  redis.call('HSET', job, 'type', args[at], 'payload', args[at + 1], 'opts',
    args[at + 5] .. ' ' .. args[at + 6] .. ' ' .. args[at + 10], 'rank', rank, 'created_ms', ctx.now_s, 'state', state)
  count(ctx, 'enqueued')
  event(ctx, 'enqueued', id)
  if unique_key ~= '' then
    redis.call('HSET', job, 'unique', unique_key)
  end
  if dead_parent then
    dead_letter(ctx, id, job, 'parent ' .. dead_parent .. ' did not complete')
  elseif state == 'blocked' then
    redis.call('HSET', job, 'pending', tostring(pending))
    zadd(ctx, 'blocked', ctx.now_s, id)
  elseif state == 'delayed' then
    redis.call('HSET', job, 'run_at', num(run_at))
    zadd(ctx, 'delayed', num(run_at), id)
  else
    zadd(ctx, 'ready', rank, id)
    ctx.signal = true
  end
  return id, 1
end

-- qq_enqueue base | n, then n groups of ENQUEUE_FIELDS -> {id1, new1, id2, new2, ...}
local function qq_enqueue(keys, args)
  local n = tonumber(args[1])
  if not n or n < 0 or #args ~= 1 + n * ENQUEUE_FIELDS then
    return redis.error_reply('ERR qq_enqueue: expected a count and ' .. ENQUEUE_FIELDS .. ' fields per job')
  end
  for i = 0, n - 1 do
    local e = job_error(args, 2 + i * ENQUEUE_FIELDS)
    if e then
      return redis.error_reply(e)
    end
  end
  local ctx = context(keys)
  local last = redis.call('INCRBY', ctx.base .. ':seq', args[1])
  local out = {}
  for i = 0, n - 1 do
    local id, created = enqueue_one(ctx, tostring(last - n + 1 + i), args, 2 + i * ENQUEUE_FIELDS)
    out[#out + 1] = id
    out[#out + 1] = created
  end
  flush(ctx)
  return out
end

-- Leases up to `count` ready jobs to `worker` for lease_ms. Reply: {hint_ms, then per job
-- id, token, type, payload, attempt (1 for the first), opts}. The attempt is recorded
-- when the lease ends (ack, failure, expiry), so a released lease spends none. hint_ms says when to look again if nothing
-- was leased: until the next delayed job or the end of the rate window, -1 if unknown, -2
-- if the queue is paused.
local function qq_fetch(keys, args)
  local ctx = context(keys)
  local base = ctx.base
  local worker, want, lease_ms = args[1], tonumber(args[2]), tonumber(args[3])
  if not want or want < 0 or not lease_ms or lease_ms <= 0 then
    return redis.error_reply('ERR qq_fetch: bad count or lease')
  end
  advance(ctx)
  if ctx.paused == 1 then
    return { -2 }
  end
  local rate_key = base .. ':rate'
  if ctx.rate_max > 0 then
    local used = tonumber(redis.call('GET', rate_key) or '0')
    if used >= ctx.rate_max then
      return { math.max(redis.call('PTTL', rate_key), 1) }
    end
    want = math.min(want, ctx.rate_max - used)
  end
  local popped = redis.call('ZPOPMIN', base .. ':ready', want)
  local leased = #popped / 2
  local out = { -1 }
  if leased == 0 then
    local next_due = redis.call('ZRANGE', base .. ':delayed', 0, 0, 'WITHSCORES')
    if next_due[2] then
      out[1] = math.max(tonumber(next_due[2]) - ctx.now, 1)
    end
    return out
  end
  -- Fencing tokens: one counter step per lease, taken in one call.
  local first_token = redis.call('INCRBY', base .. ':fence', tostring(leased)) - leased
  local until_s = num(ctx.now + lease_ms)
  local token_tail = ':' .. worker
  for i = 1, #popped, 2 do
    local id = popped[i]
    local token = tostring(first_token + (i + 1) / 2) .. token_tail
    local f = redis.call('HMGET', base .. ':job:' .. id, 'type', 'payload', 'opts', 'attempts')
    zadd(ctx, 'active', until_s, lease_member(id, token))
    out[#out + 1] = id
    out[#out + 1] = token
    out[#out + 1] = f[1]
    out[#out + 1] = f[2]
    out[#out + 1] = (tonumber(f[4]) or 0) + 1
    out[#out + 1] = f[3]
  end
  if ctx.rate_max > 0 and redis.call('INCRBY', rate_key, tostring(leased)) == leased then
    redis.call('PEXPIRE', rate_key, tostring(ctx.rate_ms))
  end
  -- Jobs left behind: wake another idle worker.
  ctx.signal = redis.call('ZCARD', base .. ':ready') > 0
  flush(ctx)
  return out
end

-- qq_ack base | n, then n times id, token, attempt, result -> {1 if recorded, 0 if the
-- lease was stale, per job}. A stale ack is refused so a job is recorded as completed once.
local function qq_ack(keys, args)
  local n = tonumber(args[1])
  if not n or #args ~= 1 + 4 * n then
    return redis.error_reply('ERR qq_ack: expected a count and id, token, attempt, result per job')
  end
  local ctx = context(keys)
  -- Most queues have no dependencies: then no job needs the per-job children lookup.
  local children_unknown = nil
  if redis.call('EXISTS', ctx.base .. ':parents') == 0 then
    children_unknown = false
  end
  local members = {}
  for i = 0, n - 1 do
    members[i + 1] = lease_member(args[2 + 4 * i], args[3 + 4 * i])
  end
  local scores = {}
  for i = 1, n, CHUNK do
    local part = redis.call('ZMSCORE', ctx.base .. ':active', unpack(members, i, math.min(i + CHUNK - 1, n)))
    for j, score in ipairs(part) do
      scores[i + j - 1] = score
    end
  end
  local out = {}
  for i = 0, n - 1 do
    local id, attempt, result = args[2 + 4 * i], args[4 + 4 * i], args[5 + 4 * i]
    if lease_valid(ctx, scores[i + 1]) then
      local job = ctx.base .. ':job:' .. id
      zrem(ctx, 'active', members[i + 1])
      redis.call('HSET', job, 'state', 'completed', 'finished_ms', ctx.now_s, 'result', result, 'attempts', attempt)
      zadd(ctx, 'done', ctx.now_s, id)
      event(ctx, 'completed', id)
      local has_children = children_unknown
      if has_children == nil then
        has_children = redis.call('SISMEMBER', ctx.base .. ':parents', id) == 1
      end
      if has_children then
        release_children(ctx, id, true)
      end
      out[#out + 1] = 1
    else
      count(ctx, 'stale')
      out[#out + 1] = 0
    end
  end
  count(ctx, 'completed', #members - (ctx.counts.stale or 0))
  flush(ctx)
  return out
end

-- qq_fail base | id, token, attempt, error, retry_delay_ms (-1: do not retry) -> 'retry',
-- 'dead', 'cancelled' or 'stale'.
local function qq_fail(keys, args)
  local ctx = context(keys)
  local id, token, attempt, reason, delay = args[1], args[2], args[3], args[4], tonumber(args[5])
  local job, member = leased_job(ctx, id, token)
  local outcome
  if not job then
    count(ctx, 'stale')
    outcome = 'stale'
  else
    zrem(ctx, 'active', member)
    redis.call('HSET', job, 'error', reason, 'attempts', attempt)
    count(ctx, 'failed')
    local f = redis.call('HMGET', job, 'cancel', 'attempts', 'opts')
    if f[1] == '1' then
      finish(ctx, id, job, 'cancelled')
      outcome = 'cancelled'
    elseif delay and delay >= 0 and tonumber(f[2]) < max_attempts_of(f[3]) then
      count(ctx, 'retried')
      event(ctx, 'retry', id)
      if delay > 0 then
        redis.call('HSET', job, 'state', 'delayed', 'run_at', num(ctx.now + delay))
        zadd(ctx, 'delayed', num(ctx.now + delay), id)
      else
        make_ready(ctx, id, job)
      end
      outcome = 'retry'
    else
      dead_letter(ctx, id, job, reason)
      outcome = 'dead'
    end
  end
  flush(ctx)
  return outcome
end

-- qq_heartbeat base | lease_ms, then id, token pairs -> per job 1 (extended), 0 (lease
-- lost: stop and do not ack), 2 (extended, but cancellation was requested).
local function qq_heartbeat(keys, args)
  local ctx = context(keys)
  local lease_ms = tonumber(args[1])
  if not lease_ms or lease_ms <= 0 or #args % 2 ~= 1 then
    return redis.error_reply('ERR qq_heartbeat: expected lease_ms and id, token pairs')
  end
  advance(ctx)
  local until_s = num(ctx.now + lease_ms)
  local out = {}
  for i = 2, #args, 2 do
    local id, token = args[i], args[i + 1]
    local job, member = leased_job(ctx, id, token)
    if job then
      zadd(ctx, 'active', until_s, member)
      out[#out + 1] = redis.call('HGET', job, 'cancel') == '1' and 2 or 1
    else
      out[#out + 1] = 0
    end
  end
  flush(ctx)
  return out
end

-- qq_release base | id, token pairs -> count released. Gives leased jobs back without
-- spending an attempt (a worker shutting down gracefully).
local function qq_release(keys, args)
  local ctx = context(keys)
  local released = 0
  for i = 1, #args, 2 do
    local id, token = args[i], args[i + 1]
    local job, member = leased_job(ctx, id, token)
    if job then
      zrem(ctx, 'active', member)
      make_ready(ctx, id, job)
      event(ctx, 'released', id)
      released = released + 1
    end
  end
  flush(ctx)
  return released
end

-- qq_progress base | id, token, progress -> 1, or 0 if the lease is stale.
local function qq_progress(keys, args)
  local ctx = context(keys)
  local job = leased_job(ctx, args[1], args[2])
  if not job then
    return 0
  end
  redis.call('HSET', job, 'progress', args[3])
  event(ctx, 'progress', args[1])
  flush(ctx)
  return 1
end

-- qq_cancel base | id -> 'cancelled' (it had not started), 'requested' (it is running: its
-- worker learns at the next heartbeat), 'finished' or 'missing'.
local function qq_cancel(keys, args)
  local ctx = context(keys)
  local id = args[1]
  local job = ctx.base .. ':job:' .. id
  local state = redis.call('HGET', job, 'state')
  local outcome = 'finished'
  if not state then
    outcome = 'missing'
  elseif is_leased(ctx.base, id, state) then
    redis.call('HSET', job, 'cancel', '1')
    event(ctx, 'cancel-requested', id)
    outcome = 'requested'
  elseif state == 'ready' or state == 'delayed' or state == 'blocked' then
    zrem(ctx, state, id)
    finish(ctx, id, job, 'cancelled')
    outcome = 'cancelled'
  end
  flush(ctx)
  return outcome
end

local function set_paused(keys, value)
  local ctx = context(keys)
  redis.call('HSET', ctx.base .. ':meta', 'paused', value)
  event(ctx, value == '1' and 'paused' or 'resumed', '')
  ctx.signal = value == '0'
  flush(ctx)
  return 'OK'
end

local function qq_pause(keys)
  return set_paused(keys, '1')
end

local function qq_resume(keys)
  return set_paused(keys, '0')
end

-- Options stored in the queue's meta hash, with the least each may be.
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
  redis.call('HSET', keys[1] .. ':meta', unpack(args))
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

-- qq_job base | id -> the job's fields as a flat array (empty if there is no such job);
-- a leased job's state reads `active`, with its lease, lease_until and worker.
local function qq_job(keys, args)
  local fields = redis.call('HGETALL', keys[1] .. ':job:' .. args[1])
  local state = nil
  for i = 1, #fields, 2 do
    if fields[i] == 'state' then
      state = fields[i + 1]
    end
  end
  local lease = is_leased(keys[1], args[1], state) and lease_of(keys[1], args[1])
  if lease then
    local token = string.sub(lease, #args[1] + 2)
    local until_ms = redis.call('ZSCORE', keys[1] .. ':active', lease)
    local worker = string.sub(token, string.find(token, ':', 1, true) + 1)
    for i = 1, #fields, 2 do
      if fields[i] == 'state' then
        fields[i + 1] = 'active'
      end
    end
    for _, v in ipairs({ 'lease', token, 'lease_until', until_ms, 'worker', worker }) do
      fields[#fields + 1] = v
    end
  end
  return fields
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
    return { unpack(args, 2) }
  end
  return redis.call('ZRANGE', base .. ':dead', 0, tonumber(args[1]) - 1)
end

-- qq_dead_retry base | limit [id ...] -> count moved back to ready, attempts reset.
local function qq_dead_retry(keys, args)
  local ctx = context(keys)
  local moved = 0
  for _, id in ipairs(dead_ids(ctx.base, args)) do
    if redis.call('ZREM', ctx.base .. ':dead', id) == 1 then
      local job = ctx.base .. ':job:' .. id
      redis.call('HSET', job, 'attempts', '0', 'cancel', '0')
      make_ready(ctx, id, job)
      event(ctx, 'revived', id)
      moved = moved + 1
    end
  end
  flush(ctx)
  return moved
end

-- qq_dead_purge base | limit [id ...] -> count deleted.
local function qq_dead_purge(keys, args)
  local base = keys[1]
  local purged = 0
  for _, id in ipairs(dead_ids(base, args)) do
    if redis.call('ZREM', base .. ':dead', id) == 1 then
      redis.call('DEL', base .. ':job:' .. id, base .. ':children:' .. id)
      purged = purged + 1
    end
  end
  return purged
end

-- qq_schedule base | name, tick_ms, then one job's ENQUEUE_FIELDS -> the new job's id, or
-- nil if this tick (or a later one) of the schedule was already enqueued. Any number of
-- scheduler instances may call it for the same tick: exactly one job results.
local function qq_schedule(keys, args)
  local name, tick = args[1], tonumber(args[2])
  if not tick or #args ~= 2 + ENQUEUE_FIELDS then
    return redis.error_reply('ERR qq_schedule: expected name, tick_ms and one job')
  end
  local e = job_error(args, 3)
  if e then
    return redis.error_reply(e)
  end
  local ctx = context(keys)
  local last = redis.call('HGET', ctx.base .. ':schedules', name)
  if last and tonumber(last) >= tick then
    return false
  end
  redis.call('HSET', ctx.base .. ':schedules', name, args[2])
  local id, created = enqueue_one(ctx, tostring(redis.call('INCR', ctx.base .. ':seq')), args, 3)
  if created == 1 then
    redis.call('HSET', ctx.base .. ':job:' .. id, 'schedule', name, 'tick', args[2])
  end
  flush(ctx)
  return id
end

-- qq_schedules base -> flat {name, last tick enqueued, ...}.
local function qq_schedules(keys)
  return redis.call('HGETALL', keys[1] .. ':schedules')
end

local function qq_version()
  return VERSION
end

local function qq_time()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
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
register('qq_schedules', qq_schedules, true)
