--[[ Give a lock back: the task is queued again at its readyAt (it keeps its
  place), fetchable at once. Also used for tasks claimed for a fetch whose
  response could not be written. The lock-expiry count is not touched.
  KEYS[1]  task hash
  ARGV[1]  tag  ARGV[2] taskId  ARGV[3] fetch worker id  ARGV[4] now
  Returns: {1, readyAt, queue} | {verdict}
]]
--@include "verdict"
local tag, taskId, now = ARGV[1], ARGV[2], tonumber(ARGV[4])
local v = lockVerdict(tag, KEYS[1], taskId, ARGV[3], now)
if v ~= 1 then return {v} end
local t = redis.call('HMGET', KEYS[1], 'queue', 'readyAt')
redis.call('HDEL', KEYS[1], unpack(LOCK_FIELDS))
redis.call('HSET', KEYS[1], 'state', 'queued')
redis.call('ZADD', tag .. 'q:' .. t[1], t[2], taskId)
redis.call('SADD', tag .. 'queues', t[1])
return {1, t[2], t[1]}
