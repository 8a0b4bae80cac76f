--[[ Start an attempt in a worker slot: compare-and-set from queued, or from an
  expired fetch lock (DESIGN §4, §7: an expired lock is claimable as is; the claim
  counts toward fetch.maxLockExpiries, and past it the task turns terminal and the
  start answers -2). A live lock is refused with -2, so a stale head ref to a
  locked task settles as "gone".
  KEYS[1]  task hash      KEYS[2]  inflight sorted set
  ARGV[1]  tag  ARGV[2] taskId  ARGV[3] attempt ("0" = whichever attempt is queued)  ARGV[4] app worker id  ARGV[5] slot (stream id)
  ARGV[6]  node id  ARGV[7] node boot id  ARGV[8] start nonce  ARGV[9] now (ms)
  Returns: {1, input, spec, deadlineAt, attempt} (spec: see includes/task.lua)
           {-1} no such task, {-2} another attempt or not queued, {-3} not ready yet.
  The attempt deadline (inflight score) is the earlier of the method and heartbeat
  timeouts from now; without either, the task only fails when its node dies.
]]
--@include "locked"
--@include "task"
local f = redis.call('HMGET', KEYS[1], 'state', 'attempt', 'readyAt', 'queue', 'spec', 'input')
if not f[1] then return {-1} end
local now = tonumber(ARGV[9])
local fromLock = f[1] == 'locked' and (tonumber(redis.call('HGET', KEYS[1], 'lockUntil')) or 0) <= now
if (f[1] ~= 'queued' and not fromLock) or (ARGV[3] ~= '0' and f[2] ~= ARGV[3]) then return {-2} end
if not fromLock and tonumber(f[3]) > now then return {-3} end
if fromLock then
  if not countLockExpiry(ARGV[1], KEYS[1], ARGV[2], f[4], now) then return {-2} end
  redis.call('HDEL', KEYS[1], unpack(LOCK_FIELDS))
end
local spec = f[5] or legacySpec(KEYS[1])
local mt, ht = string.match(spec, SPEC_TIMEOUTS)
mt, ht = tonumber(mt) or 0, tonumber(ht) or 0
-- A string, formatted once: Redis formats a Lua number in every command that gets one.
local deadlineAt = '9007199254740991'
if mt > 0 or ht > 0 then
  local at = math.huge
  if mt > 0 then at = now + mt end
  if ht > 0 then at = math.min(at, now + ht) end
  deadlineAt = string.format('%d', at)
end
-- The deadline lives in the inflight sorted set only: nothing reads it from the hash.
redis.call('HSET', KEYS[1], 'state', 'running', 'worker', ARGV[4], 'nonce', ARGV[8], 'slot', ARGV[5], 'node', ARGV[6],
  'boot', ARGV[7], 'startedAt', ARGV[9])
redis.call('ZREM', ARGV[1] .. 'q:' .. f[4], ARGV[2])
redis.call('ZADD', KEYS[2], deadlineAt, ARGV[2])
return {1, f[6], spec, deadlineAt, f[2]}
