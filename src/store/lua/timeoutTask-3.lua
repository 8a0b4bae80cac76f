--[[ End a queued task whose flow deadline has passed with TIMED_OUT. Owner-initiated:
  refused once the lease has moved. Running tasks are left to their attempt
  deadlines (a retry past the flow deadline times out in failTask). Tasks of the
  fetch surface time out too, locked or terminal: a fetch worker retrying on its
  own budget never holds a flow deadline off (DESIGN §6); its late completion then
  gets the TERMINAL verdict.
  KEYS[1]  task hash      KEYS[2]  deadlines sorted set     KEYS[3]  lease
  ARGV[1]  tag  ARGV[2] taskId  ARGV[3] now  ARGV[4] outcomes.retention  ARGV[5] lease token
  Returns: {1, outcomeId} timed out | {0} not due / not queued | {-1} gone | {-5} lease moved
]]
--@include "outcome"
local tag, taskId = ARGV[1], ARGV[2]
if redis.call('GET', KEYS[3]) ~= ARGV[5] then return {-5} end
local t = readTask(KEYS[1], 'queue')
local state, queue = t[T_STATE], t[T_OWN]
if not state then
  redis.call('ZREM', KEYS[2], taskId)
  return {-1}
end
local deadline = tonumber(string.match(t[T_SPEC], SPEC_DEADLINE)) or 0
if deadline <= 0 or deadline > tonumber(ARGV[3]) then return {0} end
if state ~= 'queued' and state ~= 'locked' and state ~= 'terminal' then
  redis.call('ZREM', KEYS[2], taskId)
  return {0}
end
redis.call('ZREM', tag .. 'q:' .. queue, taskId)
redis.call('ZREM', tag .. 'terminal', taskId)
local id = writeOutcome(tag, KEYS[1], taskId, t, 'TIMED_OUT', '', 'flow deadline passed while ' .. state, 'timeout', '1',
  ARGV[3], ARGV[4])
if not id then return {-1} end -- it had its outcome already (writeOutcome)
return {1, id}
