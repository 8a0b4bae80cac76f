--[[ Operator: end a terminal task with a FAILED outcome carrying the reason
  (error type "abandoned", non-retryable).
  KEYS[1]  task hash
  ARGV[1]  tag  ARGV[2] taskId  ARGV[3] now  ARGV[4] reason  ARGV[5] outcomes.retention (ms)
  Returns: {1, outcomeId} | {-1} no such task | {-9, state} not terminal
]]
--@include "outcome"
local tag, taskId = ARGV[1], ARGV[2]
local t = readTask(KEYS[1])
local state = t[T_STATE]
if not state then return {-1} end
if state ~= 'terminal' then return {-9, state} end
redis.call('ZREM', tag .. 'terminal', taskId)
local id = writeOutcome(tag, KEYS[1], taskId, t, 'FAILED', '', ARGV[4], 'abandoned', '1', ARGV[3], ARGV[5])
if not id then return {-1} end -- it had its outcome already (writeOutcome)
return {1, id}
