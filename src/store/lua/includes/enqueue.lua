--@include "task"

-- Enqueues one Step task, idempotently (enqueueTask, enqueueTasks). Returns a
-- code and two values: 1 created (queued, or started when `start` was given),
-- with the flow's remembered sticky app worker id and, for a task started here,
-- its attempt deadline; 0 the task already exists, with its queue and readyAt
-- while it is queued (a repeat's own values change nothing, and the node's
-- notice must name the queue the task is in); 2 it ended within
-- outcomes.retention. The sticky read rides along so that routing a new Step
-- costs no extra round trip.
--
-- `start` {worker, slot, node, boot, nonce, now, layout}: an idle slot the node bound
-- for this Step (sync match at enqueue). The task starts in it at once, as
-- includes/start.lua would start it, unless the flow remembers another sticky worker:
-- then it is queued, and the node's normal placement decides.
local function enqueueOne(taskKey, tag, taskId, queue, readyAt, flowDeadline, tenant, flowId, spec, input, start)
  if redis.call('EXISTS', taskKey, tag .. 'done:' .. taskId) > 0 then
    if redis.call('EXISTS', taskKey) == 0 then return 2, '', '' end
    local st = redis.call('HMGET', taskKey, 'state', 'queue', 'readyAt', 'nonce')
    if st[1] == 'queued' then return 0, st[2], st[3] end
    -- This very enqueue ran before and started the task in the bound slot: its reply was
    -- lost to a dropped connection and the client sent the call again. The same answer.
    if start and st[1] == 'running' and st[4] == start[5] then
      return 1, redis.call('GET', tag .. 'sticky:' .. tenant .. ':' .. flowId) or '', redis.call('ZSCORE', tag .. 'inflight', taskId) or '9007199254740991'
    end
    return 0, '', ''
  end
  local sticky = redis.call('GET', tag .. 'sticky:' .. tenant .. ':' .. flowId) or ''
  -- Past its flow deadline it does not start (as includes/start.lua): queued, the deadline times it out.
  -- ('0' is no deadline: compared as a string, no C call for the common case)
  local late = start and flowDeadline ~= '0' and flowDeadline ~= '' and tonumber(flowDeadline) <= tonumber(start[6])
  local startsHere = start and not late and (sticky == '' or sticky == start[1])
  -- Only a queued Step enters the set of queues: one started here holds no entry, and every
  -- script that puts a task back in its queue (fail, release, unlock) adds it there. It is
  -- the first write, as before any other: a command that fails (a key of the wrong type)
  -- fails the script before it has changed anything.
  if not startsHere then redis.call('SADD', tag .. 'queues', queue) end
  redis.call('SADD', tag .. 'flow:' .. tenant .. ':' .. flowId, taskId)
  if tonumber(flowDeadline) > 0 then redis.call('ZADD', tag .. 'deadlines', flowDeadline, taskId) end
  if startsHere then
    local mt, ht = string.match(spec, SPEC_TIMEOUTS)
    mt, ht = tonumber(mt) or 0, tonumber(ht) or 0
    local deadlineAt = '9007199254740991'
    if mt > 0 or ht > 0 then
      local now, at = tonumber(start[6]), math.huge
      if mt > 0 then at = now + mt end
      if ht > 0 then at = math.min(at, now + ht) end
      deadlineAt = string.format('%d', at)
    end
    -- The fields read when the task starts or ends come first: a small hash is a
    -- list, searched from its head.
    if start[7] == '2' then
      redis.call('HSET', taskKey, 'state', 'running', 'attempt', '1', 'readyAt', readyAt, 'queue', queue, 'spec', spec,
        'input', input, 'worker', start[1], 'nonce', start[5],
        'run', start[2] .. '\30' .. start[3] .. '\30' .. start[4] .. '\30' .. start[6])
    else
      redis.call('HSET', taskKey, 'state', 'running', 'attempt', '1', 'readyAt', readyAt, 'queue', queue, 'spec', spec,
        'input', input, 'worker', start[1], 'nonce', start[5], 'slot', start[2], 'node', start[3], 'boot', start[4],
        'startedAt', start[6])
    end
    redis.call('ZADD', tag .. 'inflight', deadlineAt, taskId)
    return 1, sticky, deadlineAt
  end
  redis.call('HSET', taskKey, 'state', 'queued', 'attempt', '1', 'readyAt', readyAt, 'queue', queue, 'spec', spec,
    'input', input)
  redis.call('ZADD', tag .. 'q:' .. queue, readyAt, taskId)
  return 1, sticky, ''
end
