--@include "running"
--@include "outcome"

-- Records a successful attempt (completeTasks): the task's one COMPLETED
-- outcome, and the flow's sticky worker for `stickyTtl` ms; a stickyTtl of "0" (the
-- worker is stopping) clears the flow's entry when it names this worker instead.
-- Returns two values, not a table (a table per task is an allocation and a
-- nested reply): 1, outcomeId | -1, '' no such task | -2, '' not this attempt |
-- -4, status already ended. The same call run again (its reply was lost, or the
-- client re-sent it after a reconnect) answers as the first did: the done record
-- keeps the start's nonce (startMark).
local function completeOne(tag, taskId, attempt, nonce, output, now, retention, stickyTtl)
  local taskKey = tag .. 't:' .. taskId
  local t = readTask(taskKey, 'nonce')
  local held = holdsAttempt(t[1], t[2], t[5], attempt, nonce)
  if held == -1 then
    local status, id, mark = readDone(tag, taskId)
    if not status then return -1, '' end
    if status == 'COMPLETED' and mark == startMark(nonce) then return 1, id end
    return -4, status
  end
  if held < 0 then return held, '' end
  redis.call('ZREM', tag .. 'inflight', taskId)
  local id, deadline, tenant, flowId = appendOutcome(tag, taskId, t, 'COMPLETED', output, '', '', '0', now, retention,
    startMark(nonce))
  deleteEnded(tag, taskKey, taskId, deadline, tenant, flowId)
  local worker = t[3]
  if worker and worker ~= '' then
    local stickyKey = tag .. 'sticky:' .. tenant .. ':' .. flowId
    if stickyTtl ~= '0' then redis.call('PSETEX', stickyKey, stickyTtl, worker)
    elseif redis.call('GET', stickyKey) == worker then redis.call('DEL', stickyKey) end
  end
  return 1, id
end
