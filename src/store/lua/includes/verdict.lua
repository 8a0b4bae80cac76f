-- The verdicts of the fetch surface's guarded worker mutations (Complete, Fail,
-- ExtendLock, Unlock; DESIGN §7): "this worker holds this lock", else why not.
--@include "locked"
--@include "outcome"

-- Verdict codes of a refused worker mutation (src/store/codes.ts LockVerdict).
local V_NOT_FOUND, V_LOCKED_BY_OTHER, V_LOCK_EXPIRED, V_TERMINAL = -1, -6, -7, -8

-- Whether `workerId` holds a live lock on the task, given its state, lockWorker
-- and lockUntil: 1, else a verdict read from lock state only (never the payload).
-- A task that ended within outcomes.retention (done record) is TERMINAL; one
-- never seen is NOT_FOUND.
local function verdictOf(tag, taskId, state, lockWorker, lockUntil, workerId, now)
  if not state then
    if redis.call('EXISTS', tag .. 'done:' .. taskId) == 1 then return V_TERMINAL end
    return V_NOT_FOUND
  end
  if state == 'terminal' then return V_TERMINAL end
  if state == 'running' then return V_LOCKED_BY_OTHER end
  if state == 'locked' then
    local live = (tonumber(lockUntil) or 0) > now
    if not live then return V_LOCK_EXPIRED end
    if lockWorker == workerId then return 1 end
    return V_LOCKED_BY_OTHER
  end
  -- queued: nobody holds a lock (it lapsed and was released, or was never this worker's)
  return V_LOCK_EXPIRED
end

-- Ends a task that already has its outcome: out of its queue and the terminal set,
-- deleted (see deleteEnded).
local function finishEnded(tag, taskKey, taskId, queue, deadline, tenant, flowId)
  if queue then redis.call('ZREM', tag .. 'q:' .. queue, taskId) end
  redis.call('ZREM', tag .. 'terminal', taskId)
  deleteEnded(tag, taskKey, taskId, deadline, tenant, flowId)
end

-- verdictOf for Fail, ExtendLock and Unlock. A task that has its outcome already is the
-- leftover of a completion that stopped before its delete (completeLocked): it has ended,
-- so TERMINAL, as a Complete without its key answers; a success would queue it for more
-- work or make a COMPLETED task terminal. The lock holder's call finishes the delete.
local function lockVerdict(tag, taskKey, taskId, workerId, now)
  local f = redis.call('HMGET', taskKey, 'state', 'lockWorker', 'lockUntil')
  local v = verdictOf(tag, taskId, f[1], f[2], f[3], workerId, now)
  if f[1] and redis.call('EXISTS', tag .. 'done:' .. taskId) == 1 then
    if v == 1 then
      local t = readTask(taskKey, 'queue')
      local deadline, _, tenant, flowId = string.match(t[T_SPEC], SPEC_OUTCOME)
      finishEnded(tag, taskKey, taskId, t[T_OWN], deadline, tenant, flowId)
    end
    return V_TERMINAL
  end
  return v
end
