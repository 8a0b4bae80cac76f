--[[ Complete a locked task for the fetch worker that holds its lock (DESIGN §7):
  verify and hold the lock, write the task's one COMPLETED outcome (the same
  format as a stream completion), then delete the task. Without a result the
  outcome carries the task's input (fire-and-forget).
  The idempotency key rides on the done record. A completion that finds the task
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
--@include "verdict"
local tag, taskId, worker, now, key = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[7]
local t = readTask(KEYS[1], 'lockWorker', 'lockUntil', 'queue', 'lockMs', 'input')
local LOCK_WORKER, LOCK_UNTIL, QUEUE, LOCK_MS, INPUT = T_OWN, T_OWN + 1, T_OWN + 2, T_OWN + 3, T_OWN + 4
local doneStatus, doneId, doneIdem = readDone(tag, taskId)
if doneStatus then
  if t[T_STATE] and verdictOf(tag, taskId, t[T_STATE], t[LOCK_WORKER], t[LOCK_UNTIL], worker, now) == 1 then
    local deadline, _, tenant, flowId = string.match(t[T_SPEC], SPEC_OUTCOME)
    finishEnded(tag, KEYS[1], taskId, t[QUEUE], deadline, tenant, flowId)
  end
  if key ~= '' and doneIdem == key then return {1, doneId, '1'} end
  return {V_TERMINAL}
end
local v = verdictOf(tag, taskId, t[T_STATE], t[LOCK_WORKER], t[LOCK_UNTIL], worker, now)
if v ~= 1 then return {v} end
-- Hold the lock across the dispatch: should the delete below not happen, the
-- task is re-offered only after a full lock duration, not at the old lockUntil.
local holdUntil = now + (tonumber(t[LOCK_MS]) or 0)
redis.call('HSET', KEYS[1], 'lockUntil', holdUntil)
redis.call('ZADD', tag .. 'q:' .. t[QUEUE], holdUntil, taskId)
local output = t[INPUT] or ''
if ARGV[5] == '1' then output = ARGV[6] end
local id, deadline, tenant, flowId = appendOutcome(tag, taskId, t, 'COMPLETED', output, '', '', '0', ARGV[4], ARGV[8], key)
if ARGV[9] == 'after-outcome' then return redis.error_reply('ZD_FAULT injected after the outcome was written') end
finishEnded(tag, KEYS[1], taskId, t[QUEUE], deadline, tenant, flowId)
return {1, id, '0'}
