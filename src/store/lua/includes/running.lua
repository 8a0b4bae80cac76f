-- Checks that the caller still holds this attempt: the task exists, runs, and
-- its attempt and start nonce match. Returns 1, or a negative code:
-- -1 no such task (see ended()), -2 the attempt is no longer this caller's.
local function holdsAttempt(taskKey, attempt, nonce)
  local f = redis.call('HMGET', taskKey, 'state', 'attempt', 'nonce')
  if not f[1] then return -1 end
  if f[1] ~= 'running' or f[2] ~= attempt or f[3] ~= nonce then return -2 end
  return 1
end

-- For a task that no longer exists: -4 with its outcome status when it ended
-- within outcomes.retention, else -1.
local function ended(tag, taskId)
  local status = redis.call('HGET', tag .. 'done:' .. taskId, 'status')
  if status then return {-4, status} end
  return {-1}
end

local RUNNING_FIELDS = {'worker', 'slot', 'node', 'boot', 'nonce', 'startedAt', 'hbAt', 'deadlineAt'}
