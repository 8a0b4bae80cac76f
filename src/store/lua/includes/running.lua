--@include "outcome"

-- Checks that the caller still holds this attempt, given the task's state,
-- attempt and start nonce as read by the script: the task exists, runs, and its
-- attempt and start nonce match. Returns 1, or a negative code:
-- -1 no such task (see ended()), -2 the attempt is no longer this caller's.
local function holdsAttempt(state, attempt, nonce, wantAttempt, wantNonce)
  if not state then return -1 end
  if state ~= 'running' or attempt ~= wantAttempt or nonce ~= wantNonce then return -2 end
  return 1
end

-- For a task that no longer exists: -4 with its outcome status when it ended
-- within outcomes.retention, else -1.
local function ended(tag, taskId)
  local status = readDone(tag, taskId)
  if status then return {-4, status} end
  return {-1}
end

-- Clears the fields a start (includes/start.lua) sets (but state) when an attempt goes back to the queue,
-- in either task layout (hbAt and deadlineAt: written by older versions).
local function clearRunning(taskKey)
  redis.call('HDEL', taskKey, 'worker', 'nonce', 'run', 'slot', 'node', 'boot', 'startedAt', 'hbAt', 'deadlineAt')
end
