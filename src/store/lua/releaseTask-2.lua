--[[ Return an attempt without consuming it (decline, half-close without output,
  failed write to the stream): back to queued with the same attempt and input,
  at its original readyAt so it keeps its place.
  KEYS[1]  task hash      KEYS[2]  inflight sorted set
  ARGV[1]  tag  ARGV[2] taskId  ARGV[3] attempt  ARGV[4] start nonce
  Returns: {1, readyAt} | {-1} | {-2} | {-4, status}
]]
--@include "running"
local tag, taskId = ARGV[1], ARGV[2]
local held = holdsAttempt(KEYS[1], ARGV[3], ARGV[4])
if held == -1 then return ended(tag, taskId) end
if held < 0 then return {held} end
redis.call('ZREM', KEYS[2], taskId)
local t = redis.call('HMGET', KEYS[1], 'queue', 'readyAt', 'deadline')
redis.call('HDEL', KEYS[1], unpack(RUNNING_FIELDS))
redis.call('HSET', KEYS[1], 'state', 'queued')
redis.call('ZADD', tag .. 'q:' .. t[1], t[2], taskId)
redis.call('SADD', tag .. 'queues', t[1])
if (tonumber(t[3]) or 0) > 0 then redis.call('ZADD', tag .. 'deadlines', t[3], taskId) end
return {1, t[2]}
