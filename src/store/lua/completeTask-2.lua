--[[ Record a successful attempt: the task's one COMPLETED outcome.
  KEYS[1]  task hash      KEYS[2]  inflight sorted set
  ARGV[1]  tag  ARGV[2] taskId  ARGV[3] attempt  ARGV[4] start nonce  ARGV[5] output
  ARGV[6]  now  ARGV[7] outcomes.retention (ms)  ARGV[8] sticky TTL (ms)
  Returns: {1, outcomeId} | {-1} no such task | {-2} not this attempt | {-4, status} already ended
]]
--@include "running"
--@include "outcome"
local tag, taskId = ARGV[1], ARGV[2]
local t = readTask(KEYS[1], 'nonce')
local held = holdsAttempt(t[T_STATE], t[T_ATTEMPT], t[T_OWN], ARGV[3], ARGV[4])
if held == -1 then return ended(tag, taskId) end
if held < 0 then return {held} end
redis.call('ZREM', KEYS[2], taskId)
local id, deadline, tenant, flowId = appendOutcome(tag, taskId, t, 'COMPLETED', ARGV[5], '', '', '0', ARGV[6], ARGV[7])
deleteEnded(tag, KEYS[1], taskId, deadline, tenant, flowId)
local worker = t[T_WORKER]
if worker and worker ~= '' then
  redis.call('SET', tag .. 'sticky:' .. tenant .. ':' .. flowId, worker, 'PX', ARGV[8])
end
return {1, id}
