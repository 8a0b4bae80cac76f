--[[ Enqueue one Step task, idempotently.
  KEYS[1]  task hash                     zd:{p}:t:<taskId>
  ARGV[1]  tag (key prefix with hash tag, "zd:{p}:")
  ARGV[2]  taskId          ARGV[3]  queue name "<tenant>:<flowType>:<stepType>"
  ARGV[4]  now (ms)        ARGV[5]  readyAt (ms)      ARGV[6]  flow deadline (ms, 0 = none)
  ARGV[7]  tenant  ARGV[8] flowId  ARGV[9] spec (see includes/task.lua; enqueuedAt = now)
  ARGV[10] input (bytes)
  Returns: {1, remembered sticky app worker id or ""} created; {0} the task already exists;
           {2} it ended within outcomes.retention. (The sticky read rides along so that
           routing a new Step costs no extra round trip.)
]]
local tag, taskId, queue = ARGV[1], ARGV[2], ARGV[3]
if redis.call('EXISTS', KEYS[1], tag .. 'done:' .. taskId) > 0 then
  if redis.call('EXISTS', KEYS[1]) == 1 then return {0} end
  return {2}
end
-- The fields read when the task starts or ends come first: a small hash is a
-- list, searched from its head.
redis.call('HSET', KEYS[1], 'state', 'queued', 'attempt', '1', 'readyAt', ARGV[5], 'queue', queue, 'spec', ARGV[9],
  'input', ARGV[10])
redis.call('ZADD', tag .. 'q:' .. queue, ARGV[5], taskId)
redis.call('SADD', tag .. 'queues', queue)
redis.call('SADD', tag .. 'flow:' .. ARGV[7] .. ':' .. ARGV[8], taskId)
if tonumber(ARGV[6]) > 0 then redis.call('ZADD', tag .. 'deadlines', ARGV[6], taskId) end
return {1, redis.call('GET', tag .. 'sticky:' .. ARGV[7] .. ':' .. ARGV[8]) or ''}
