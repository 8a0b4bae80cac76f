-- Enqueues one Step task, idempotently (enqueueTask, enqueueTasks). Returns a
-- code and the flow's remembered sticky app worker id: 1 created (with the
-- sticky id, or ""), 0 the task already exists, 2 it ended within
-- outcomes.retention. The sticky read rides along so that routing a new Step
-- costs no extra round trip.
local function enqueueOne(taskKey, tag, taskId, queue, readyAt, flowDeadline, tenant, flowId, spec, input)
  if redis.call('EXISTS', taskKey, tag .. 'done:' .. taskId) > 0 then
    if redis.call('EXISTS', taskKey) == 1 then return 0, '' end
    return 2, ''
  end
  -- The fields read when the task starts or ends come first: a small hash is a
  -- list, searched from its head.
  redis.call('HSET', taskKey, 'state', 'queued', 'attempt', '1', 'readyAt', readyAt, 'queue', queue, 'spec', spec,
    'input', input)
  redis.call('ZADD', tag .. 'q:' .. queue, readyAt, taskId)
  redis.call('SADD', tag .. 'queues', queue)
  redis.call('SADD', tag .. 'flow:' .. tenant .. ':' .. flowId, taskId)
  if tonumber(flowDeadline) > 0 then redis.call('ZADD', tag .. 'deadlines', flowDeadline, taskId) end
  return 1, redis.call('GET', tag .. 'sticky:' .. tenant .. ':' .. flowId) or ''
end
