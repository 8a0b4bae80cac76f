--[[ Enqueue a batch of Step tasks, each as enqueueTask does (includes/enqueue.lua):
  one script call instead of one per task (EnqueueSteps). On a Redis Cluster every
  task of a call is in one partition; on one Redis they may span partitions.
  KEYS[1]  the first task's hash (routes the call)
  ARGV     nine values per task: tag, taskId, queue, readyAt (ms), flow deadline (ms, 0 = none),
           tenant, flowId, spec (enqueuedAt inside), input (bytes)
  Returns: two values per task, in order: the code (1 created, 0 exists, 2 ended) and the
           remembered sticky app worker id ("" unless created).
]]
--@include "enqueue"
local out = {}
for i = 1, #ARGV, 9 do
  local tag, taskId = ARGV[i], ARGV[i + 1]
  local code, sticky = enqueueOne(tag .. 't:' .. taskId, tag, taskId, ARGV[i + 2], ARGV[i + 3], ARGV[i + 4], ARGV[i + 5],
    ARGV[i + 6], ARGV[i + 7], ARGV[i + 8])
  out[#out + 1] = code
  out[#out + 1] = sticky
end
return out
