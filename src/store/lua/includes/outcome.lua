-- Writes the one outcome of a task to the partition's outcome stream and its
-- done record (kept for outcomes.retention), then deletes the task and its index
-- entries. The caller has already removed it from its queue or from inflight.
--
-- The done record zd:{p}:done:<taskId> is one string: status, outcomeId,
-- fetchIdem, tenant, flowId, flowType, stepType, seid, attempt, worker, errMsg,
-- errType, errNR, finishedAt, enqueuedAt, each followed by a \255 byte, then the
-- output (src/store/outcomes.ts decodeDone). Every field but the output is a
-- string the node sent, UTF-8, which never holds the byte \255. It holds the
-- whole outcome: the stream entry may be trimmed before the record expires.
--
-- The stream entry has two fields: taskId, and `o`, the done record's string
-- without outcomeId and fetchIdem (src/store/outcomes.ts decodeEntry). Two
-- fields instead of fifteen: every field is an argument to convert, a listpack
-- element to write and a reply element for every consumer that reads it.
--@include "task"

-- Every script that may end a task reads its hash once, with readTask: state,
-- attempt, worker, spec (includes/task.lua; set for a task that exists), then
-- the script's own fields, from T_OWN on. That reply is `t` below.
local T_STATE, T_ATTEMPT, T_WORKER, T_SPEC, T_OWN = 1, 2, 3, 4, 5

-- (The functions below index `t` with literals: every script-level local a
-- function names is bound again each time the script runs.)
local function readTask(taskKey, ...)
  local t = redis.call('HMGET', taskKey, 'state', 'attempt', 'worker', 'spec', ...)
  if t[1] and not t[4] then t[4] = legacySpec(taskKey) end
  return t
end

-- The status, outcomeId and fetchIdem of a task that ended within
-- outcomes.retention; nil when there is none.
local function readDone(tag, taskId)
  local key = tag .. 'done:' .. taskId
  local v = redis.pcall('GET', key)
  if type(v) == 'table' then
    -- WRONGTYPE: a done hash, as written before the record was one string
    local h = redis.call('HMGET', key, 'status', 'outcomeId', 'fetchIdem')
    return h[1], h[2], h[3]
  end
  if not v then return nil end
  return string.match(v, '^([^\255]*)\255([^\255]*)\255([^\255]*)\255')
end

-- What a worker stream's attempt keeps in the done record's fetchIdem slot: its
-- start nonce behind a control byte, which no fetch idempotency key may hold
-- (api/validation.ts requireId), so the two can never be taken for each other.
local function startMark(nonce)
  return '\1' .. nonce
end

-- appendOutcome and deleteEnded are the two halves of writeOutcome, for
-- callers that must do something between them or need the task's tenant and
-- flowId (completeLocked, includes/complete.lua).
-- `fetchIdem`: the fetch surface's idempotency key, or a stream attempt's startMark,
-- kept on the done record.
-- Returns the outcome's stream entry id and what deleteEnded needs: the task's
-- flow deadline, tenant and flowId.
local function appendOutcome(tag, taskId, t, status, output, errMsg, errType, errNR, now, retention, fetchIdem)
  local deadline, enqueuedAt, tenant, flowId, flowType, stepType, seid = string.match(t[4], SPEC_OUTCOME)
  local attempt, worker = t[2] or '0', t[3] or ''
  -- The stream entry and the done record share everything after the status
  -- (the entry has no outcomeId, its own id, nor fetchIdem): built once.
  local rest = tenant .. '\255' .. flowId .. '\255' .. flowType .. '\255' .. stepType .. '\255' .. seid .. '\255' ..
    attempt .. '\255' .. worker .. '\255' .. errMsg .. '\255' .. errType .. '\255' .. errNR .. '\255' .. now .. '\255' ..
    enqueuedAt .. '\255' .. output
  local id = redis.call('XADD', tag .. 'out', '*', 'taskId', taskId, 'o', status .. '\255' .. rest)
  -- PSETEX, not SET … PX: the same write without SET's option parsing, ≈ 1 000
  -- instructions a call (docs/benchmarks.md)
  redis.call('PSETEX', tag .. 'done:' .. taskId, retention,
    status .. '\255' .. id .. '\255' .. (fetchIdem or '') .. '\255' .. rest)
  return id, deadline, tenant, flowId
end

local function deleteEnded(tag, taskKey, taskId, deadline, tenant, flowId)
  redis.call('DEL', taskKey)
  redis.call('SREM', tag .. 'flow:' .. tenant .. ':' .. flowId, taskId)
  -- only tasks with a flow deadline are ever added there
  if (tonumber(deadline) or 0) > 0 then redis.call('ZREM', tag .. 'deadlines', taskId) end
end

-- Returns the outcome's stream entry id; false, writing nothing, for a task that
-- already has its outcome: a leftover of a script that stopped between its outcome
-- and its delete (Redis keeps a failing script's earlier writes; completeLocked's
-- fault point), deleted here. Every task gets exactly one outcome.
local function writeOutcome(tag, taskKey, taskId, t, status, output, errMsg, errType, errNR, now, retention, fetchIdem)
  if redis.call('EXISTS', tag .. 'done:' .. taskId) == 1 then
    local deadline, _, tenant, flowId = string.match(t[4], SPEC_OUTCOME)
    redis.call('ZREM', tag .. 'terminal', taskId)
    deleteEnded(tag, taskKey, taskId, deadline, tenant, flowId)
    return false
  end
  local id, deadline, tenant, flowId = appendOutcome(tag, taskId, t, status, output, errMsg, errType, errNR, now,
    retention, fetchIdem)
  deleteEnded(tag, taskKey, taskId, deadline, tenant, flowId)
  return id
end
