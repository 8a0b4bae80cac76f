--[[ Enqueue one Step task, idempotently (includes/enqueue.lua).
  KEYS[1]  task hash                     zd:{p}:t:<taskId>
  ARGV     the task's values as enqueueTasks takes them: tag (key prefix with hash tag,
           "zd:{p}:"), taskId, queue name "<tenant>:<flowType>:<stepType>", readyAt (ms),
           flow deadline (ms, 0 = none), tenant, flowId, spec (see includes/task.lua;
           enqueuedAt inside), input (bytes)
  Returns: {1, remembered sticky app worker id or ""} created; {0, queue, readyAt} the task
           already exists (queue and readyAt "" unless it is queued); {2} it ended within
           outcomes.retention.
]]
--@include "enqueue"
local code, a, b = enqueueOne(KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9])
if code == 1 then return {1, a} end
if code == 0 then return {0, a, b} end
return {code}
