--[[ Operator: a terminal task goes back to queued, ready now, with a fresh fetch
  budget (fetchRetries as given, lock expiries reset). The step attempt is kept.
  KEYS[1]  task hash
  ARGV[1]  tag  ARGV[2] taskId  ARGV[3] now  ARGV[4] fetch retries (0 = unset)
  Returns: {1, queue} | {-1} no such task | {-9, state} not terminal
]]
local tag, taskId = ARGV[1], ARGV[2]
local t = redis.call('HMGET', KEYS[1], 'state', 'queue')
if not t[1] then return {-1} end
if t[1] ~= 'terminal' then return {-9, t[1]} end
redis.call('ZREM', tag .. 'terminal', taskId)
redis.call('HDEL', KEYS[1], 'termReason', 'termAt')
redis.call('HSET', KEYS[1], 'state', 'queued', 'readyAt', ARGV[3], 'fetchRetries', ARGV[4], 'lockExpiries', 0)
redis.call('ZADD', tag .. 'q:' .. t[2], ARGV[3], taskId)
redis.call('SADD', tag .. 'queues', t[2])
return {1, t[2]}
