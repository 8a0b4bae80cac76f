--[[ Cancel every task of a flow: each gets a CANCELLED outcome at once. Queued
  tasks leave their queue; running ones leave inflight and are returned so their
  slots get a Cancel frame (a late result then finds the CANCELLED outcome).
  KEYS[1]  flow set        KEYS[2]  inflight sorted set
  ARGV[1]  tag  ARGV[2] reason  ARGV[3] now  ARGV[4] outcomes.retention (ms)
  Returns: {queuedCount, runningCount, {taskId, attempt, nonce, node, slot}...}
]]
--@include "outcome"
local tag = ARGV[1]
local queued, running, slots = 0, 0, {}
for _, taskId in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local taskKey = tag .. 't:' .. taskId
  local t = redis.call('HMGET', taskKey, 'state', 'queue', 'attempt', 'nonce', 'node', 'slot')
  if t[1] == 'queued' or t[1] == 'locked' or t[1] == 'terminal' then
    -- locked and terminal: the fetch surface's (its late worker calls get the TERMINAL verdict)
    redis.call('ZREM', tag .. 'q:' .. t[2], taskId)
    redis.call('ZREM', tag .. 'terminal', taskId)
    writeOutcome(tag, taskKey, taskId, 'CANCELLED', '', ARGV[2], 'cancelled', '1', ARGV[3], ARGV[4])
    queued = queued + 1
  elseif t[1] == 'running' then
    redis.call('ZREM', KEYS[2], taskId)
    writeOutcome(tag, taskKey, taskId, 'CANCELLED', '', ARGV[2], 'cancelled', '1', ARGV[3], ARGV[4])
    running = running + 1
    slots[#slots + 1] = {taskId, t[3], t[4], t[5], t[6]}
  elseif not t[1] then
    redis.call('SREM', KEYS[1], taskId)
  end
end
return {queued, running, slots}
