--[[ Enqueue a batch of Step tasks, each as enqueueTask does (includes/enqueue.lua), and
  start those the node bound an idle slot for (sync match at enqueue): one script call
  instead of one per task, and for a bound task none for its start. On a Redis Cluster
  every task of a call is in one partition; on one Redis they may span partitions.
  KEYS[1]  the first task's hash (routes the call)
  ARGV[1]  now (ms)  ARGV[2] task layout of a task started here (src/store/layout.ts)
  ARGV     then per task: tag, taskId, queue, readyAt (ms), flow deadline (ms, 0 = none),
           tenant, flowId, spec (enqueuedAt inside), input (bytes), and the bound slot's app
           worker id; "" ends an unbound task's values there (ten), a bound task's go on with
           its slot (stream id), node id, node boot id and start nonce (fourteen). Every
           argument costs Redis its parsing and an ARGV entry, ≈ 800 instructions.
  Returns: three values per task, in order: the code (1 created, 0 exists, 2 ended), then
           for a created task the remembered sticky app worker id and the attempt deadline of
           a task started here ("" = queued), for one that exists its queue and readyAt while
           it is queued ("" otherwise).
]]
--@include "enqueue"
local now, layout = ARGV[1], ARGV[2]
local out = {}
local i, n = 3, #ARGV
while i <= n do
  local tag, taskId = ARGV[i], ARGV[i + 1]
  local start = nil
  if ARGV[i + 9] ~= '' then start = {ARGV[i + 9], ARGV[i + 10], ARGV[i + 11], ARGV[i + 12], ARGV[i + 13], now, layout} end
  local code, sticky, deadlineAt = enqueueOne(tag .. 't:' .. taskId, tag, taskId, ARGV[i + 2], ARGV[i + 3], ARGV[i + 4],
    ARGV[i + 5], ARGV[i + 6], ARGV[i + 7], ARGV[i + 8], start)
  out[#out + 1] = code
  out[#out + 1] = sticky
  out[#out + 1] = deadlineAt
  if start then i = i + 14 else i = i + 10 end
end
return out
