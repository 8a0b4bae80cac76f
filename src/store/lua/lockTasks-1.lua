--[[ Claim up to N fetchable tasks of some queues of one partition for a fetch
  worker (DESIGN §7). Fetchable: an entry of the queue with score <= now whose
  task is queued (its readyAt passed) or locked with an expired lock, and whose
  flow deadline has not passed. Each claim
  of an expired lock counts; past the task's fetch.maxLockExpiries it turns
  terminal instead of being handed out, unless it has its outcome already (a
  completion stopped before its delete, completeLocked): that one has ended and
  is deleted. Entries of missing or terminal tasks are dropped.
  KEYS[1]  terminal sorted set (zd:{p}:terminal)
  ARGV[1]  tag  ARGV[2] now (ms)  ARGV[3] fetch worker id  ARGV[4] lock duration (ms)
  ARGV[5]  most tasks to claim  ARGV[6] fetch.maxLockExpiries  ARGV[7..] queue names
  Returns: {claimed, nextDue, terminalIds, endedIds} where claimed is a list of
           {taskId, queue, flowId, seid, input, lockUntil, fetchRetries, attempt},
           nextDue the lowest score left in these queues ("" = none; at or before now
           when something due is left), terminalIds the tasks that turned terminal here,
           and endedIds the leftovers deleted here, each as {taskId, queue}.
]]
--@include "locked"
--@include "task"
local tag, now, worker = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local lockMs, left, maxExpiries = tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6]
local lockUntil = now + lockMs
local claimed, terminal, ended = {}, {}, {}
-- Entries one call looks at per queue, past the ones it claims or removes: tasks past
-- their flow deadline wait in place for the owner's timer, and must not hide the
-- fetchable ones behind them.
local SKIP_MAX = 256
-- Queues whose due entries this call saw to the end: whatever of them is left is
-- not fetchable now (a late task), so only their future entries say when to look again.
local seenAll = {}
for i = 7, #ARGV do
  if left <= 0 then break end
  local queue = ARGV[i]
  local q = tag .. 'q:' .. queue
  local skipped = 0
  while left > 0 and skipped < SKIP_MAX do
    -- a few extra entries in case some are stale; claimed and removed ones leave the
    -- range, so the next page starts after the entries left in place
    local page = left + 16
    local ids = redis.call('ZRANGEBYSCORE', q, '-inf', now, 'LIMIT', skipped, page)
    local read = 0
    for _, taskId in ipairs(ids) do
      if left <= 0 then break end
      read = read + 1
      local taskKey = tag .. 't:' .. taskId
      -- One read for the check and the claim's reply: almost every entry read is claimed.
      local t = redis.call('HMGET', taskKey, 'state', 'readyAt', 'lockUntil', 'spec', 'input', 'fetchRetries', 'attempt')
      local ok, gone = false, false
      -- Past its flow deadline: not claimed, and no lock expiry counted (as
      -- includes/start.lua); the owner's deadline timer ends it TIMED_OUT.
      local dl = t[1] and string.match(t[4] or legacySpec(taskKey), SPEC_DEADLINE)
      local late = dl and dl ~= '0' and dl ~= '' and (tonumber(dl) or 0) > 0 and tonumber(dl) <= now
      if not t[1] or t[1] == 'terminal' then
        redis.call('ZREM', q, taskId)
        gone = true
      elseif late then
        ok = false
      elseif t[1] == 'queued' then
        ok = (tonumber(t[2]) or 0) <= now
      elseif t[1] == 'locked' and (tonumber(t[3]) or 0) <= now then
        ok = countLockExpiry(tag, taskKey, taskId, queue, now)
        if not ok then
          if redis.call('EXISTS', tag .. 'done:' .. taskId) == 1 then
            -- A leftover that has its outcome: ended, not a terminal task an operator would
            -- retry into more work or abandon into a second outcome. Deleted as deleteEnded
            -- (includes/outcome.lua) would, as includes/start.lua does.
            local deadline, _, tenant, flowId = string.match(t[4] or legacySpec(taskKey), SPEC_OUTCOME)
            redis.call('ZREM', tag .. 'terminal', taskId)
            redis.call('DEL', taskKey)
            redis.call('SREM', tag .. 'flow:' .. tenant .. ':' .. flowId, taskId)
            if (tonumber(deadline) or 0) > 0 then redis.call('ZREM', tag .. 'deadlines', taskId) end
            ended[#ended + 1] = {taskId, queue}
          else
            terminal[#terminal + 1] = {taskId, queue}
          end
          gone = true
        end
      end
      if ok then
        redis.call('HSET', taskKey, 'state', 'locked', 'lockWorker', worker, 'worker', worker,
          'lockUntil', lockUntil, 'lockMs', lockMs, 'maxExpiries', maxExpiries)
        redis.call('ZADD', q, lockUntil, taskId)
        local flowId, seid = string.match(t[4] or legacySpec(taskKey), SPEC_FLOW_SEID)
        claimed[#claimed + 1] = {taskId, queue, flowId, seid, t[5], tostring(lockUntil), t[6] or '0', t[7]}
        left = left - 1
      elseif not gone then
        skipped = skipped + 1
      end
    end
    -- A short page read to its end was the last of the due entries: no read to find that out.
    if #ids < page and read == #ids then
      seenAll[i] = true
      break
    end
  end
end
-- The lowest score left in these queues: at or before now, something due may be left (the
-- claim stopped at its count, or passed too many late entries); later, nothing is due
-- before it (the node may skip these queues until then, src/gateway/fetch-hints.ts).
local nextDue = ''
for i = 7, #ARGV do
  local q = tag .. 'q:' .. ARGV[i]
  local first
  if seenAll[i] then first = redis.call('ZRANGEBYSCORE', q, '(' .. now, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
  else first = redis.call('ZRANGE', q, 0, 0, 'WITHSCORES') end
  if first[2] and (nextDue == '' or tonumber(first[2]) < tonumber(nextDue)) then nextDue = first[2] end
end
return {claimed, nextDue, terminal, ended}
