--[[ Cancel every task of a flow: each gets a CANCELLED outcome at once. Queued
  tasks leave their queue; running ones leave inflight and are returned so their
  slots get a Cancel frame (a late result then finds the CANCELLED outcome).
  KEYS[1]  flow set        KEYS[2]  inflight sorted set
  ARGV[1]  tag  ARGV[2] reason  ARGV[3] now  ARGV[4] outcomes.retention (ms)
  Returns: {queuedCount, runningCount, {{taskId, attempt, nonce, node, slot}...}, {queued taskId...}, {their queues...}}
           (the queued ids: their outcome waiters are woken by id, and their owner drops their heads)
]]
--@include "outcome"
local tag = ARGV[1]
local queued, running, slots, ended, queues = 0, 0, {}, {}, {}
for _, taskId in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local taskKey = tag .. 't:' .. taskId
  local t = readTask(taskKey, 'queue', 'nonce', 'node', 'slot', 'run')
  local state = t[T_STATE]
  if state == 'queued' or state == 'locked' or state == 'terminal' then
    -- locked and terminal: the fetch surface's (its late worker calls get the TERMINAL verdict)
    redis.call('ZREM', tag .. 'q:' .. t[T_OWN], taskId)
    redis.call('ZREM', tag .. 'terminal', taskId)
    -- (false: it had ended already, and is not counted as cancelled)
    if writeOutcome(tag, taskKey, taskId, t, 'CANCELLED', '', ARGV[2], 'cancelled', '1', ARGV[3], ARGV[4]) then
      queued = queued + 1
      ended[queued] = taskId
      queues[queued] = t[T_OWN]
    end
  elseif state == 'running' then
    redis.call('ZREM', KEYS[2], taskId)
    if writeOutcome(tag, taskKey, taskId, t, 'CANCELLED', '', ARGV[2], 'cancelled', '1', ARGV[3], ARGV[4]) then
      running = running + 1
      local slot, node = runningOf(t[T_OWN + 4], t[T_OWN + 3], t[T_OWN + 2])
      slots[#slots + 1] = {taskId, t[T_ATTEMPT], t[T_OWN + 1], node, slot}
    end
  elseif not state then
    redis.call('SREM', KEYS[1], taskId)
  end
end
return {queued, running, slots, ended, queues}
