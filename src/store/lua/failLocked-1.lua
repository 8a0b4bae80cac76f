--[[ A fetch worker reports a failure (DESIGN §6 "second budget"): the step attempt
  is never consumed. With retries left the task is queued again, fetchable after
  the retry timeout, carrying the retries; with 0 retries it turns terminal
  (durable, listed, no longer backlog). Guarded by "this worker holds this lock".
  KEYS[1]  task hash
  ARGV[1]  tag  ARGV[2] taskId  ARGV[3] fetch worker id  ARGV[4] now  ARGV[5] error message
  ARGV[6]  error type  ARGV[7] retries left  ARGV[8] retry timeout (ms)
  Returns: {1, readyAt, queue} retry scheduled | {2, queue} terminal | {verdict}
]]
--@include "verdict"
local tag, taskId, now = ARGV[1], ARGV[2], tonumber(ARGV[4])
local v = lockVerdict(tag, KEYS[1], taskId, ARGV[3], now)
if v ~= 1 then return {v} end
local queue = redis.call('HGET', KEYS[1], 'queue')
local retries = tonumber(ARGV[7])
redis.call('HSET', KEYS[1], 'errMsg', ARGV[5], 'errType', ARGV[6], 'fetchRetries', retries)
if retries <= 0 then
  makeTerminal(tag, KEYS[1], taskId, queue, now, 'fetch retries exhausted')
  return {2, queue}
end
local readyAt = now + tonumber(ARGV[8])
redis.call('HDEL', KEYS[1], unpack(LOCK_FIELDS))
redis.call('HSET', KEYS[1], 'state', 'queued', 'readyAt', readyAt)
redis.call('ZADD', tag .. 'q:' .. queue, readyAt, taskId)
redis.call('SADD', tag .. 'queues', queue)
return {1, readyAt, queue}
