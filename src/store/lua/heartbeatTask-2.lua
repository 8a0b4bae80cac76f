--[[ Record a worker heartbeat: pushes the heartbeat deadline out, never past the
  method deadline.
  KEYS[1]  task hash      KEYS[2]  inflight sorted set
  ARGV[1]  tag  ARGV[2] taskId  ARGV[3] attempt  ARGV[4] start nonce  ARGV[5] now
  Returns: {1, deadlineAt} | {-1} | {-2} | {-4, status}
]]
--@include "running"
local tag, taskId = ARGV[1], ARGV[2]
local t = redis.call('HMGET', KEYS[1], 'state', 'attempt', 'nonce', 'startedAt', 'spec', 'run')
local held = holdsAttempt(t[1], t[2], t[3], ARGV[3], ARGV[4])
if held == -1 then return ended(tag, taskId) end
if held < 0 then return {held} end
local now = tonumber(ARGV[5])
local mt, ht = string.match(t[5] or legacySpec(KEYS[1]), SPEC_TIMEOUTS)
mt, ht = tonumber(mt) or 0, tonumber(ht) or 0
local deadlineAt = 9007199254740991
if mt > 0 then
  local _, _, _, startedAt = runningOf(t[6], nil, nil, nil, t[4])
  deadlineAt = tonumber(startedAt) + mt
end
if ht > 0 then deadlineAt = math.min(deadlineAt, now + ht) end
redis.call('ZADD', KEYS[2], deadlineAt, taskId)
return {1, tostring(deadlineAt)}
