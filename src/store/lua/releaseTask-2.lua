--[[ Return an attempt without consuming it (decline, half-close without output,
  failed write to the stream): back to queued with the same attempt and input,
  at its original readyAt so it keeps its place.
  KEYS[1]  task hash      KEYS[2]  inflight sorted set
  ARGV[1]  tag  ARGV[2] taskId  ARGV[3] attempt  ARGV[4] start nonce
  Returns: {1, readyAt, flowDeadline (0 = none)} | {-1} | {-2} | {-4, status}
  The same call run again (its reply was lost, or the client re-sent it after a
  reconnect) answers as the first did: the task keeps the returned start's mark
  in backNonce until it is started again.
]]
--@include "running"
local tag, taskId = ARGV[1], ARGV[2]
local t = redis.call('HMGET', KEYS[1], 'state', 'attempt', 'nonce', 'queue', 'readyAt', 'spec', 'backNonce')
local mark = startMark(ARGV[4])
local held = holdsAttempt(t[1], t[2], t[3], ARGV[3], ARGV[4])
if held == -1 then return ended(tag, taskId) end
if held < 0 then
  if t[1] == 'queued' and t[7] == mark and t[2] == ARGV[3] then
    return {1, t[5], string.match(t[6] or legacySpec(KEYS[1]), SPEC_DEADLINE) or '0'}
  end
  return {held}
end
redis.call('ZREM', KEYS[2], taskId)
clearRunning(KEYS[1])
redis.call('HSET', KEYS[1], 'state', 'queued', 'backNonce', mark)
redis.call('ZADD', tag .. 'q:' .. t[4], t[5], taskId)
redis.call('SADD', tag .. 'queues', t[4])
local deadline = string.match(t[6] or legacySpec(KEYS[1]), SPEC_DEADLINE)
if (tonumber(deadline) or 0) > 0 then redis.call('ZADD', tag .. 'deadlines', deadline, taskId) end
-- The owner's deadline timer may have fired while the task ran (and found it running):
-- the caller tells the owner again, so that a deadline past by now still ends it.
return {1, t[5], deadline or '0'}
