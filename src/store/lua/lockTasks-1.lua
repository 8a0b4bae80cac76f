--[[ Claim up to N fetchable tasks of some queues of one partition for a fetch
  worker (DESIGN §7). Fetchable: an entry of the queue with score <= now whose
  task is queued (its readyAt passed) or locked with an expired lock, and whose
  flow deadline has not passed. Each claim
  of an expired lock counts; past the task's fetch.maxLockExpiries it turns
  terminal instead of being handed out. Entries of missing or terminal tasks
  are dropped.
  KEYS[1]  terminal sorted set (zd:{p}:terminal)
  ARGV[1]  tag  ARGV[2] now (ms)  ARGV[3] fetch worker id  ARGV[4] lock duration (ms)
  ARGV[5]  most tasks to claim  ARGV[6] fetch.maxLockExpiries  ARGV[7..] queue names
  Returns: {claimed, nextDue, terminalIds} where claimed is a list of
           {taskId, queue, flowId, seid, input, lockUntil, fetchRetries, attempt},
           nextDue the lowest score left in these queues ("" = none; at or before now
           when something due is left), and terminalIds the tasks that turned terminal here.
]]
--@include "locked"
--@include "task"
local tag, now, worker = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local lockMs, left, maxExpiries = tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6]
local lockUntil = now + lockMs
local claimed, terminal = {}, {}
for i = 7, #ARGV do
  if left <= 0 then break end
  local queue = ARGV[i]
  local q = tag .. 'q:' .. queue
  -- a few extra entries in case some are stale; the rest wait for the next fetch
  for _, taskId in ipairs(redis.call('ZRANGEBYSCORE', q, '-inf', now, 'LIMIT', 0, left + 16)) do
    if left <= 0 then break end
    local taskKey = tag .. 't:' .. taskId
    -- One read for the check and the claim's reply: almost every entry read is claimed.
    local t = redis.call('HMGET', taskKey, 'state', 'readyAt', 'lockUntil', 'spec', 'input', 'fetchRetries', 'attempt')
    local ok = false
    -- Past its flow deadline: not claimed, and no lock expiry counted (as
    -- includes/start.lua); the owner's deadline timer ends it TIMED_OUT.
    local dl = t[1] and string.match(t[4] or legacySpec(taskKey), SPEC_DEADLINE)
    local late = dl and dl ~= '0' and dl ~= '' and (tonumber(dl) or 0) > 0 and tonumber(dl) <= now
    if not t[1] or t[1] == 'terminal' then
      redis.call('ZREM', q, taskId)
    elseif late then
      ok = false
    elseif t[1] == 'queued' then
      ok = (tonumber(t[2]) or 0) <= now
    elseif t[1] == 'locked' and (tonumber(t[3]) or 0) <= now then
      ok = countLockExpiry(tag, taskKey, taskId, queue, now)
      if not ok then terminal[#terminal + 1] = taskId end
    end
    if ok then
      redis.call('HSET', taskKey, 'state', 'locked', 'lockWorker', worker, 'worker', worker,
        'lockUntil', lockUntil, 'lockMs', lockMs, 'maxExpiries', maxExpiries)
      redis.call('ZADD', q, lockUntil, taskId)
      local flowId, seid = string.match(t[4] or legacySpec(taskKey), SPEC_FLOW_SEID)
      claimed[#claimed + 1] = {taskId, queue, flowId, seid, t[5], tostring(lockUntil), t[6] or '0', t[7]}
      left = left - 1
    end
  end
end
-- The lowest score left in these queues: at or before now, something due is left (the
-- claim stopped at its count, or passed too many stale entries); later, nothing is due
-- before it (the node may skip these queues until then, src/gateway/fetch-hints.ts).
local nextDue = ''
for i = 7, #ARGV do
  local first = redis.call('ZRANGE', tag .. 'q:' .. ARGV[i], 0, 0, 'WITHSCORES')
  if first[2] and (nextDue == '' or tonumber(first[2]) < tonumber(nextDue)) then nextDue = first[2] end
end
return {claimed, nextDue, terminal}
