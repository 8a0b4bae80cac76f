--@include "locked"
--@include "task"

-- Starts an attempt in a worker slot (startTasks): compare-and-set from queued,
-- or from an expired fetch lock (DESIGN §4, §7: an expired lock is claimable as
-- is; the claim counts toward fetch.maxLockExpiries, and past it the task turns
-- terminal and the start answers -2). A live lock is refused with -2, so a stale
-- head ref to a locked task settles as "gone". `attempt` "0" takes whichever
-- attempt is queued (heads loaded from a queue scan do not know it).
-- Returns five values, not a table (a table per task is an allocation and a
-- nested reply): 1, input, spec, deadlineAt, attempt (spec: see
-- includes/task.lua); or a code and four empty strings: -1 no such task, -2
-- another attempt, not queued, or past its flow deadline, -3 not ready yet.
-- The attempt deadline (inflight score) is the earlier of the method and
-- heartbeat timeouts from now; without either, the task only fails when its
-- node dies.
local function startOne(tag, taskId, attempt, worker, slot, node, boot, nonce, now, layout)
  local taskKey = tag .. 't:' .. taskId
  local f = redis.call('HMGET', taskKey, 'state', 'attempt', 'readyAt', 'queue', 'spec', 'input')
  if not f[1] then return -1, '', '', '', '' end
  local nowN = tonumber(now)
  local fromLock = f[1] == 'locked' and (tonumber(redis.call('HGET', taskKey, 'lockUntil')) or 0) <= nowN
  if (f[1] ~= 'queued' and not fromLock) or (attempt ~= '0' and f[2] ~= attempt) then
    -- This very start ran before: its reply was lost to a dropped connection and the
    -- client sent the call again. The same answer, or the slot never gets the task.
    if f[1] == 'running' and redis.call('HGET', taskKey, 'nonce') == nonce then
      return 1, f[6], f[5] or legacySpec(taskKey), redis.call('ZSCORE', tag .. 'inflight', taskId) or '9007199254740991', f[2]
    end
    return -2, '', '', '', ''
  end
  if not fromLock and tonumber(f[3]) > nowN then return -3, '', '', '', '' end
  local spec = f[5] or legacySpec(taskKey)
  local mt, ht, dl = string.match(spec, SPEC_START)
  -- Past its flow deadline: not started (a task returned or retried after its deadline
  -- passed while it ran); the owner's deadline timer ends it TIMED_OUT.
  -- ('0' is no deadline: compared as a string, no C call for the common case)
  if dl ~= '0' and dl ~= '' and (tonumber(dl) or 0) > 0 and tonumber(dl) <= nowN then return -2, '', '', '', '' end
  if fromLock then
    if redis.call('EXISTS', tag .. 'done:' .. taskId) == 1 then
      -- A completion that stopped after its outcome (see writeOutcome): a leftover, not a
      -- task to run again. Deleted as deleteEnded (includes/outcome.lua) would: that
      -- include's functions cost every start their closures, this branch almost never runs.
      local deadline, _, tenant, flowId = string.match(spec, SPEC_OUTCOME)
      redis.call('ZREM', tag .. 'q:' .. f[4], taskId)
      redis.call('DEL', taskKey)
      redis.call('SREM', tag .. 'flow:' .. tenant .. ':' .. flowId, taskId)
      if (tonumber(deadline) or 0) > 0 then redis.call('ZREM', tag .. 'deadlines', taskId) end
      return -2, '', '', '', ''
    end
    if not countLockExpiry(tag, taskKey, taskId, f[4], nowN) then return -2, '', '', '', '' end
    redis.call('HDEL', taskKey, unpack(LOCK_FIELDS))
  end
  mt, ht = tonumber(mt) or 0, tonumber(ht) or 0
  -- A string, formatted once: Redis formats a Lua number in every command that gets one.
  local deadlineAt = '9007199254740991'
  if mt > 0 or ht > 0 then
    local at = math.huge
    if mt > 0 then at = nowN + mt end
    if ht > 0 then at = math.min(at, nowN + ht) end
    deadlineAt = string.format('%d', at)
  end
  -- The deadline lives in the inflight sorted set only: nothing reads it from the hash.
  -- `layout`: the task layout the cluster writes (src/store/layout.ts)
  if layout == '2' then
    redis.call('HSET', taskKey, 'state', 'running', 'worker', worker, 'nonce', nonce,
      'run', slot .. '\30' .. node .. '\30' .. boot .. '\30' .. now)
  else
    redis.call('HSET', taskKey, 'state', 'running', 'worker', worker, 'nonce', nonce, 'slot', slot, 'node', node,
      'boot', boot, 'startedAt', now)
  end
  redis.call('ZREM', tag .. 'q:' .. f[4], taskId)
  redis.call('ZADD', tag .. 'inflight', deadlineAt, taskId)
  return 1, f[6], spec, deadlineAt, f[2]
end
