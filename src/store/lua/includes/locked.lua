-- The fetch surface's lock (DESIGN §7). A locked task stays in its queue's
-- sorted set with score = lockUntil and state 'locked', so one
-- `ZRANGEBYSCORE q -inf now` finds ready queued tasks and expired locks alike:
-- expiry is part of the claim predicate and nothing reaps locks. A terminal
-- task leaves its queue (no longer backlog) for the partition's `terminal`
-- sorted set (score = when it turned terminal), where operators find it.
--
-- Task hash fields: lockWorker, lockUntil, lockMs (the duration last asked
-- for), worker (= lockWorker, so the outcome names the fetch worker),
-- lockExpiries (claims of an expired lock so far), maxExpiries
-- (fetch.maxLockExpiries when last locked), fetchRetries, termReason, termAt.
--@include "outcome"

local LOCK_FIELDS = {'lockWorker', 'lockUntil', 'lockMs', 'worker'}

-- Verdict codes of a refused worker mutation (src/store/codes.ts LockVerdict).
local V_NOT_FOUND, V_LOCKED_BY_OTHER, V_LOCK_EXPIRED, V_TERMINAL = -1, -6, -7, -8

-- Whether `workerId` holds a live lock on the task: 1, else a verdict read
-- from lock state only (never the payload). A task that ended within
-- outcomes.retention (done hash) is TERMINAL; one never seen is NOT_FOUND.
local function lockVerdict(tag, taskKey, taskId, workerId, now)
  local f = redis.call('HMGET', taskKey, 'state', 'lockWorker', 'lockUntil')
  if not f[1] then
    if redis.call('EXISTS', tag .. 'done:' .. taskId) == 1 then return V_TERMINAL end
    return V_NOT_FOUND
  end
  if f[1] == 'terminal' then return V_TERMINAL end
  if f[1] == 'running' then return V_LOCKED_BY_OTHER end
  if f[1] == 'locked' then
    local live = (tonumber(f[3]) or 0) > now
    if not live then return V_LOCK_EXPIRED end
    if f[2] == workerId then return 1 end
    return V_LOCKED_BY_OTHER
  end
  -- queued: nobody holds a lock (it lapsed and was released, or was never this worker's)
  return V_LOCK_EXPIRED
end

local function makeTerminal(tag, taskKey, taskId, queue, now, reason)
  redis.call('ZREM', tag .. 'q:' .. queue, taskId)
  redis.call('HDEL', taskKey, unpack(LOCK_FIELDS))
  redis.call('HSET', taskKey, 'state', 'terminal', 'termReason', reason, 'termAt', now)
  redis.call('ZADD', tag .. 'terminal', now, taskId)
end

-- A claim of an expired lock (by a fetch, or by a stream slot's start) counts.
-- Past the task's maxExpiries it turns terminal instead; returns false then.
local function countLockExpiry(tag, taskKey, taskId, queue, now)
  local n = redis.call('HINCRBY', taskKey, 'lockExpiries', 1)
  local max = tonumber(redis.call('HGET', taskKey, 'maxExpiries')) or 0
  if max > 0 and n > max then
    makeTerminal(tag, taskKey, taskId, queue, now,
      'lock expired ' .. n .. ' times (fetch.maxLockExpiries = ' .. max .. ')')
    return false
  end
  return true
end

-- Ends a task that already has its outcome: out of its queue and the terminal set, deleted.
local function finishEnded(tag, taskKey, taskId)
  local queue = redis.call('HGET', taskKey, 'queue')
  if queue then redis.call('ZREM', tag .. 'q:' .. queue, taskId) end
  redis.call('ZREM', tag .. 'terminal', taskId)
  deleteEnded(tag, taskKey, taskId)
end
