--[[ Extend a live lock held by this fetch worker to now + duration.
  KEYS[1]  task hash
  ARGV[1]  tag  ARGV[2] taskId  ARGV[3] fetch worker id  ARGV[4] now  ARGV[5] lock duration (ms)
  Returns: {1, lockUntil, queue} | {verdict}
]]
--@include "verdict"
local tag, taskId, now = ARGV[1], ARGV[2], tonumber(ARGV[4])
local v = lockVerdict(tag, KEYS[1], taskId, ARGV[3], now)
if v ~= 1 then return {v} end
local lockUntil = now + tonumber(ARGV[5])
local queue = redis.call('HGET', KEYS[1], 'queue')
redis.call('HSET', KEYS[1], 'lockUntil', lockUntil, 'lockMs', ARGV[5])
redis.call('ZADD', tag .. 'q:' .. queue, lockUntil, taskId)
return {1, tostring(lockUntil), queue}
