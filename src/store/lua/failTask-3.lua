--[[ Fail an attempt and run the retry policy.
  KEYS[1]  task hash      KEYS[2]  inflight sorted set     KEYS[3]  lease
  ARGV[1]  tag  ARGV[2] taskId  ARGV[3] attempt  ARGV[4] start nonce
  ARGV[5]  error message  ARGV[6] error type  ARGV[7] non-retryable ("1"/"0")
  ARGV[8]  retry-after hint (ms, 0 = policy)  ARGV[9] now  ARGV[10] outcomes.retention (ms)
  ARGV[11] lease token "<node>:<epoch>" the caller owns, or "" when a gateway fails its own slot's
           attempt (owner-initiated expiries are refused once the lease has moved)
  ARGV[12] why an owner fails the attempt, checked here and not by the owner's earlier reads (a
           heartbeat, or an end and a new start, may land between those reads and this call):
           "" none (a gateway's own slot) | "due": the attempt's inflight deadline is <= now |
           "lost\30<node>\30<boot>": the attempt runs on that node instance, which the owner found gone.
           With a reason, a task that does not run also loses its inflight entry, if one is left.
  Returns: {1, readyAt, nextAttempt, flowDeadline (0 = none), sticky} retry scheduled (sticky: the flow's
           sticky worker, the request's else the remembered one, for the retry's sticky phase) |
           {2, outcomeId, status} the outcome written:
           FAILED, or TIMED_OUT when the retry would start past the flow deadline | {-1} | {-2} |
           {-4, status} | {-5} lease moved | {-10} the owner's reason (ARGV[12]) no longer holds
  The same call run again (its reply was lost, or the client re-sent it after a
  reconnect) answers as the first did: a retry keeps the failed start's mark in
  backNonce, an outcome's done record keeps it too (startMark; an owner's call, with a
  lease token, marks it apart, so that only its own call run again matches it).
]]
--@include "running"
--@include "outcome"
local tag, taskId = ARGV[1], ARGV[2]
if ARGV[11] ~= '' and redis.call('GET', KEYS[3]) ~= ARGV[11] then return {-5} end
local t = readTask(KEYS[1], 'nonce', 'queue', 'backNonce', 'readyAt')
local NONCE, QUEUE, BACK_NONCE, READY_AT = T_OWN, T_OWN + 1, T_OWN + 2, T_OWN + 3
-- An owner's fail keeps a mark of its own: a worker's late failure for the attempt
-- the owner ended (timed out, node taken for lost) is then no replay of that call,
-- and is refused as stale instead of answered as if it had been recorded.
local mark = startMark(ARGV[4])
if ARGV[11] ~= '' then mark = mark .. '\2' end

-- The retry's sticky worker: the request's, else the one the flow remembers.
local function retrySticky()
  local sticky = string.match(t[T_SPEC], SPEC_STICKY)
  if sticky ~= '' then return sticky end
  local _, _, tenant, flowId = string.match(t[T_SPEC], SPEC_OUTCOME)
  return redis.call('GET', tag .. 'sticky:' .. tenant .. ':' .. flowId) or ''
end

local why = ARGV[12] or ''
local held = holdsAttempt(t[T_STATE], t[T_ATTEMPT], t[NONCE], ARGV[3], ARGV[4])
-- An owner's call for a task that does not run: an inflight entry left of it (a task hash
-- deleted from outside) goes here, where no start can come in between.
if held < 0 and why ~= '' and t[T_STATE] ~= 'running' then redis.call('ZREM', KEYS[2], taskId) end
if held == -1 then
  local status, id, doneMark = readDone(tag, taskId)
  if not status then return {-1} end
  if doneMark == mark and (status == 'FAILED' or status == 'TIMED_OUT') then return {2, id, status} end
  return {-4, status}
end
if held < 0 then
  if t[T_STATE] == 'queued' and t[BACK_NONCE] == mark and tonumber(t[T_ATTEMPT]) == tonumber(ARGV[3]) + 1 then
    local deadline = tonumber(string.match(t[T_SPEC], SPEC_DEADLINE)) or 0
    return {1, tonumber(t[READY_AT]), t[T_ATTEMPT], string.format('%d', deadline), retrySticky()}
  end
  return {held}
end
local now = tonumber(ARGV[9])
if why == 'due' then
  local at = redis.call('ZSCORE', KEYS[2], taskId)
  if not at or tonumber(at) > now then return {-10} end
elseif why ~= '' then
  local lostNode, lostBoot = string.match(why, '^lost\30([^\30]*)\30([^\30]*)$')
  local r = redis.call('HMGET', KEYS[1], 'run', 'node', 'boot')
  local _, node, boot = runningOf(r[1], nil, r[2], r[3], nil)
  if not lostNode or node ~= lostNode or (boot or '') ~= lostBoot then return {-10} end
end
redis.call('ZREM', KEYS[2], taskId)
local maxAttempts, initial, coefficient, maxInterval, nonRetryable = string.match(t[T_SPEC], SPEC_RETRY)
local attempt = tonumber(t[T_ATTEMPT])
local terminal = ARGV[7] == '1' or attempt >= tonumber(maxAttempts)
if not terminal and ARGV[6] ~= '' then
  for typ in string.gmatch(nonRetryable, '[^\31]+') do
    if typ == ARGV[6] then terminal = true end
  end
end
if terminal then
  local id = writeOutcome(tag, KEYS[1], taskId, t, 'FAILED', '', ARGV[5], ARGV[6], ARGV[7], ARGV[9], ARGV[10], mark)
  if not id then return {-1} end
  return {2, id, 'FAILED'}
end
local backoff = tonumber(ARGV[8])
if backoff <= 0 then
  backoff = math.min(tonumber(maxInterval), tonumber(initial) * math.pow(tonumber(coefficient), attempt - 1))
end
local readyAt = now + math.floor(backoff)
local deadline = tonumber(string.match(t[T_SPEC], SPEC_DEADLINE)) or 0
if deadline > 0 and readyAt >= deadline then
  local id = writeOutcome(tag, KEYS[1], taskId, t, 'TIMED_OUT', '', ARGV[5], ARGV[6], ARGV[7], ARGV[9], ARGV[10], mark)
  if not id then return {-1} end
  return {2, id, 'TIMED_OUT'}
end
local queue = t[QUEUE]
clearRunning(KEYS[1])
redis.call('HSET', KEYS[1], 'state', 'queued', 'attempt', attempt + 1, 'readyAt', readyAt,
  'errMsg', ARGV[5], 'errType', ARGV[6], 'backNonce', mark)
redis.call('ZADD', tag .. 'q:' .. queue, readyAt, taskId)
redis.call('SADD', tag .. 'queues', queue)
if deadline > 0 then redis.call('ZADD', tag .. 'deadlines', deadline, taskId) end
return {1, readyAt, attempt + 1, string.format('%d', deadline), retrySticky()}
