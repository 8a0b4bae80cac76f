--[[ Enqueue one Step task, idempotently.
  KEYS[1]  task hash                     zd:{p}:t:<taskId>
  ARGV[1]  tag (key prefix with hash tag, "zd:{p}:")
  ARGV[2]  taskId          ARGV[3]  queue name "<tenant>:<flowType>:<stepType>"
  ARGV[4]  now (ms)        ARGV[5]  readyAt (ms)      ARGV[6]  flow deadline (ms, 0 = none)
  ARGV[7]  tenant  ARGV[8] flowId  ARGV[9] flowType  ARGV[10] stepType  ARGV[11] stepExecutionId
  ARGV[12] input (bytes)
  ARGV[13] maxAttempts  ARGV[14] initialInterval  ARGV[15] backoffCoefficient  ARGV[16] maxInterval
  ARGV[17] nonRetryable failure types, "\31"-joined
  ARGV[18] methodTimeout (ms)  ARGV[19] heartbeatTimeout (ms)  ARGV[20] sticky app worker id
  Returns: {1, remembered sticky app worker id or ""} created; {0} the task already exists;
           {2} it ended within outcomes.retention. (The sticky read rides along so that
           routing a new Step costs no extra round trip.)
]]
local tag, taskId, queue = ARGV[1], ARGV[2], ARGV[3]
if redis.call('EXISTS', KEYS[1]) == 1 then return {0} end
if redis.call('EXISTS', tag .. 'done:' .. taskId) == 1 then return {2} end
redis.call('HSET', KEYS[1],
  'state', 'queued', 'attempt', '1', 'queue', queue, 'enqueuedAt', ARGV[4], 'readyAt', ARGV[5],
  'deadline', ARGV[6], 'tenant', ARGV[7], 'flowId', ARGV[8], 'flowType', ARGV[9], 'stepType', ARGV[10],
  'seid', ARGV[11], 'input', ARGV[12], 'maxAttempts', ARGV[13], 'initialInterval', ARGV[14],
  'backoffCoefficient', ARGV[15], 'maxInterval', ARGV[16], 'nonRetryable', ARGV[17],
  'methodTimeout', ARGV[18], 'hbTimeout', ARGV[19], 'sticky', ARGV[20])
redis.call('ZADD', tag .. 'q:' .. queue, ARGV[5], taskId)
redis.call('SADD', tag .. 'queues', queue)
redis.call('SADD', tag .. 'flow:' .. ARGV[7] .. ':' .. ARGV[8], taskId)
if tonumber(ARGV[6]) > 0 then redis.call('ZADD', tag .. 'deadlines', ARGV[6], taskId) end
return {1, redis.call('GET', tag .. 'sticky:' .. ARGV[7] .. ':' .. ARGV[8]) or ''}
