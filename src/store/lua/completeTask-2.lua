--[[ Record a successful attempt: the task's one COMPLETED outcome.
  KEYS[1]  task hash      KEYS[2]  inflight sorted set
  ARGV[1]  tag  ARGV[2] taskId  ARGV[3] attempt  ARGV[4] start nonce  ARGV[5] output
  ARGV[6]  now  ARGV[7] outcomes.retention (ms)  ARGV[8] sticky TTL (ms)
  Returns: {1, outcomeId} | {-1} no such task | {-2} not this attempt | {-4, status} already ended
]]
--@include "running"
--@include "outcome"
local tag, taskId = ARGV[1], ARGV[2]
local held = holdsAttempt(KEYS[1], ARGV[3], ARGV[4])
if held == -1 then return ended(tag, taskId) end
if held < 0 then return {held} end
local f = redis.call('HMGET', KEYS[1], 'tenant', 'flowId', 'worker')
redis.call('ZREM', KEYS[2], taskId)
local id = writeOutcome(tag, KEYS[1], taskId, 'COMPLETED', ARGV[5], '', '', '0', ARGV[6], ARGV[7])
if f[3] and f[3] ~= '' then
  redis.call('SET', tag .. 'sticky:' .. f[1] .. ':' .. f[2], f[3], 'PX', ARGV[8])
end
return {1, id}
