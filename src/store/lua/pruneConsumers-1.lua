--[[ Deletes the consumers of one consumer group on a partition's outcome stream that
  hold no unacked outcome and have not been handed one for a while (OutcomeStore.trim).
  Engines name a consumer per process, often a new one per restart, and Redis keeps
  every name a group ever read with, on every partition's stream: without this they
  piled up for good (memory, and XINFO CONSUMERS replies that only grew). A consumer
  that reads again is made again by that read. Checked and deleted in one script: a
  consumer handed outcomes between a check and its delete would lose them from the
  group's pending list, and nobody would ever redeliver them.
  KEYS[1]  the outcome stream
  ARGV[1]  group  ARGV[2] idle time (ms) from which a consumer without pending outcomes goes
  Returns: how many consumers were deleted (0 when the stream or the group is missing)
]]
local consumers = redis.pcall('XINFO', 'CONSUMERS', KEYS[1], ARGV[1])
if type(consumers) ~= 'table' or consumers.err then return 0 end
local idleMin = tonumber(ARGV[2])
local deleted = 0
for _, c in ipairs(consumers) do
  local f = {}
  for i = 1, #c, 2 do f[c[i]] = c[i + 1] end
  if f.name and f.pending == 0 and (tonumber(f.idle) or 0) >= idleMin then
    redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], f.name)
    deleted = deleted + 1
  end
end
return deleted
