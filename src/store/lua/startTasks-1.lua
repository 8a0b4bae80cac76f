--[[ Start a batch of attempts, each in its worker slot, as includes/start.lua
  startOne does: the starts a node commits in one event-loop turn, in one script
  call (store/call-batch.ts). On a Redis Cluster every task of a call is in one
  partition; on one Redis they may span partitions.
  KEYS[1]  the first task's hash (routes the call)
  ARGV[1]  now (ms)  ARGV[2] node id  ARGV[3] node boot id  ARGV[4] task layout (src/store/layout.ts)
  ARGV     then six values per task: tag, taskId, attempt ("0" = whichever is queued),
           app worker id, slot (stream id), start nonce
  Returns: five values per task, in order: startOne's five.
]]
--@include "start"
local now, node, boot, layout = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local out = {}
local n = 0
for i = 5, #ARGV, 6 do
  out[n + 1], out[n + 2], out[n + 3], out[n + 4], out[n + 5] =
    startOne(ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4], node, boot, ARGV[i + 5], now, layout)
  n = n + 5
end
return out
