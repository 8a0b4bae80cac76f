-- Writes the one outcome of a task to the partition's outcome stream and its
-- done hash (kept for outcomes.retention), then deletes the task and its index
-- entries. The caller has already removed it from its queue or from inflight.
-- Returns the outcome's stream entry id.
--
-- appendOutcome and deleteEnded are its two halves, for callers that must
-- do something between them (completeLocked: the fetch surface's idempotency
-- key rides on the done hash). Every other script calls writeOutcome.
local function appendOutcome(tag, taskKey, taskId, status, output, errMsg, errType, errNR, now, retention)
  local f = redis.call('HMGET', taskKey, 'tenant', 'flowId', 'flowType', 'stepType', 'seid', 'attempt',
    'worker', 'enqueuedAt')
  local fields = {
    'taskId', taskId, 'tenant', f[1] or '', 'flowId', f[2] or '', 'flowType', f[3] or '',
    'stepType', f[4] or '', 'seid', f[5] or '', 'status', status, 'attempt', f[6] or '0',
    'worker', f[7] or '', 'output', output, 'errMsg', errMsg, 'errType', errType, 'errNR', errNR,
    'finishedAt', now, 'enqueuedAt', f[8] or '0'
  }
  local id = redis.call('XADD', tag .. 'out', '*', unpack(fields))
  local doneKey = tag .. 'done:' .. taskId
  redis.call('HSET', doneKey, 'outcomeId', id, unpack(fields))
  redis.call('PEXPIRE', doneKey, retention)
  return id
end

local function deleteEnded(tag, taskKey, taskId)
  local f = redis.call('HMGET', taskKey, 'tenant', 'flowId')
  redis.call('DEL', taskKey)
  redis.call('SREM', tag .. 'flow:' .. (f[1] or '') .. ':' .. (f[2] or ''), taskId)
  redis.call('ZREM', tag .. 'deadlines', taskId)
end

local function writeOutcome(tag, taskKey, taskId, status, output, errMsg, errType, errNR, now, retention)
  local id = appendOutcome(tag, taskKey, taskId, status, output, errMsg, errType, errNR, now, retention)
  deleteEnded(tag, taskKey, taskId)
  return id
end
