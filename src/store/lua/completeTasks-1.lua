--[[ Record a batch of successful attempts, each as includes/complete.lua
  completeOne does: the results a node commits in one event-loop turn, in one
  script call (store/call-batch.ts). On a Redis Cluster every task of a call is
  in one partition; on one Redis they may span partitions.
  KEYS[1]  the first task's hash (routes the call)
  ARGV[1]  now (ms)  ARGV[2] outcomes.retention (ms)  ARGV[3] sticky TTL (ms; "0": the worker is stopping)
  ARGV     then five values per task: tag, taskId, attempt, start nonce, output
  Returns: two values per task, in order: completeOne's two.
]]
--@include "complete"
local now, retention, stickyTtl = ARGV[1], ARGV[2], ARGV[3]
local out = {}
local n = 0
for i = 4, #ARGV, 5 do
  out[n + 1], out[n + 2] = completeOne(ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4], now, retention, stickyTtl)
  n = n + 2
end
return out
