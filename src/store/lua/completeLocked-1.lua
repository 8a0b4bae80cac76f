--[[ Complete a locked task for the fetch worker that holds its lock (DESIGN §7):
  verify and hold the lock, write the task's one COMPLETED outcome (the same
  format as a stream completion), then delete the task. Without a result the
  outcome carries the task's input (fire-and-forget).
  The idempotency key rides on the done hash. A completion that finds the task
  already has an outcome — its reply was lost, or a completion stopped between
  the outcome and the delete (Redis keeps a failing script's earlier writes; the
  leftover task is re-offered once its lock lapses) — answers success without a
  second outcome when its key matches, finishing the delete if it holds the lock.
  KEYS[1]  task hash
  ARGV[1]  tag  ARGV[2] taskId  ARGV[3] fetch worker id  ARGV[4] now  ARGV[5] has result ("1"/"0")
  ARGV[6]  result  ARGV[7] idempotency key ("" = none)  ARGV[8] outcomes.retention (ms)
  ARGV[9]  fault point: "" always in production; "after-outcome" (tests only) fails the
           script right after the outcome is written, as a failing command would
  Returns: {1, outcomeId, absorbed "0"/"1"} | {verdict} (-1 not found, -6 locked by other,
           -7 lock expired, -8 terminal or ended)
]]
--@include "locked"
local tag, taskId, worker, now, key = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[7]
local doneKey = tag .. 'done:' .. taskId
local done = redis.call('HMGET', doneKey, 'outcomeId', 'fetchIdem')
if done[1] then
  if redis.call('EXISTS', KEYS[1]) == 1 and lockVerdict(tag, KEYS[1], taskId, worker, now) == 1 then
    finishEnded(tag, KEYS[1], taskId)
  end
  if key ~= '' and done[2] == key then return {1, done[1], '1'} end
  return {V_TERMINAL}
end
local v = lockVerdict(tag, KEYS[1], taskId, worker, now)
if v ~= 1 then return {v} end
local t = redis.call('HMGET', KEYS[1], 'queue', 'lockMs', 'input')
-- Hold the lock across the dispatch: should the delete below not happen, the
-- task is re-offered only after a full lock duration, not at the old lockUntil.
local holdUntil = now + (tonumber(t[2]) or 0)
redis.call('HSET', KEYS[1], 'lockUntil', holdUntil)
redis.call('ZADD', tag .. 'q:' .. t[1], holdUntil, taskId)
local output = t[3] or ''
if ARGV[5] == '1' then output = ARGV[6] end
local id = appendOutcome(tag, KEYS[1], taskId, 'COMPLETED', output, '', '', '0', ARGV[4], ARGV[8])
redis.call('HSET', doneKey, 'fetchIdem', key)
if ARGV[9] == 'after-outcome' then return redis.error_reply('ZD_FAULT injected after the outcome was written') end
finishEnded(tag, KEYS[1], taskId)
return {1, id, '0'}
