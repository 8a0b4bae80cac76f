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

local LOCK_FIELDS = {'lockWorker', 'lockUntil', 'lockMs', 'worker'}

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
