--[[ Enqueue one Step task, idempotently (includes/enqueue.lua).
  KEYS[1]  task hash                     zd:{p}:t:<taskId>
  ARGV[1]  tag (key prefix with hash tag, "zd:{p}:")
  ARGV[2]  taskId          ARGV[3]  queue name "<tenant>:<flowType>:<stepType>"
  ARGV[4]  now (ms)        ARGV[5]  readyAt (ms)      ARGV[6]  flow deadline (ms, 0 = none)
  ARGV[7]  tenant  ARGV[8] flowId  ARGV[9] spec (see includes/task.lua; enqueuedAt = now)
  ARGV[10] input (bytes)
  Returns: {1, remembered sticky app worker id or ""} created; {0} the task already exists;
           {2} it ended within outcomes.retention.
]]
--@include "enqueue"
local code, sticky = enqueueOne(KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9], ARGV[10])
if code == 1 then return {1, sticky} end
return {code}
