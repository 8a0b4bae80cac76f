--[[ Start an attempt in a worker slot: compare-and-set from queued, or from an
  expired fetch lock (DESIGN §4, §7: an expired lock is claimable as is; the claim
  counts toward fetch.maxLockExpiries, and past it the task turns terminal and the
  start answers -2). A live lock is refused with -2, so a stale head ref to a
  locked task settles as "gone".
  KEYS[1]  task hash      KEYS[2]  inflight sorted set
  ARGV[1]  tag  ARGV[2] taskId  ARGV[3] attempt ("0" = whichever attempt is queued)  ARGV[4] app worker id  ARGV[5] slot (stream id)
  ARGV[6]  node id  ARGV[7] node boot id  ARGV[8] start nonce  ARGV[9] now (ms)
  Returns: {1, input, tenant, flowId, flowType, stepType, seid, enqueuedAt, methodTimeout,
            hbTimeout, deadline, deadlineAt, attempt}
           {-1} no such task, {-2} another attempt or not queued, {-3} not ready yet.
  The attempt deadline (inflight score) is the earlier of the method and heartbeat
  timeouts from now; without either, the task only fails when its node dies.
]]
--@include "locked"
local f = redis.call('HMGET', KEYS[1], 'state', 'attempt', 'readyAt', 'queue', 'methodTimeout', 'hbTimeout',
  'lockUntil')
if not f[1] then return {-1} end
local now = tonumber(ARGV[9])
local fromLock = f[1] == 'locked' and (tonumber(f[7]) or 0) <= now
if (f[1] ~= 'queued' and not fromLock) or (ARGV[3] ~= '0' and f[2] ~= ARGV[3]) then return {-2} end
if not fromLock and tonumber(f[3]) > now then return {-3} end
if fromLock then
  if not countLockExpiry(ARGV[1], KEYS[1], ARGV[2], f[4], now) then return {-2} end
  redis.call('HDEL', KEYS[1], unpack(LOCK_FIELDS))
end
local deadlineAt = 9007199254740991
local mt, ht = tonumber(f[5]) or 0, tonumber(f[6]) or 0
if mt > 0 then deadlineAt = math.min(deadlineAt, now + mt) end
if ht > 0 then deadlineAt = math.min(deadlineAt, now + ht) end
redis.call('HSET', KEYS[1], 'state', 'running', 'worker', ARGV[4], 'slot', ARGV[5], 'node', ARGV[6],
  'boot', ARGV[7], 'nonce', ARGV[8], 'startedAt', ARGV[9], 'hbAt', ARGV[9], 'deadlineAt', deadlineAt)
local q = ARGV[1] .. 'q:' .. f[4]
redis.call('ZREM', q, ARGV[2])
redis.call('ZADD', KEYS[2], deadlineAt, ARGV[2])
local p = redis.call('HMGET', KEYS[1], 'input', 'tenant', 'flowId', 'flowType', 'stepType', 'seid',
  'enqueuedAt', 'methodTimeout', 'hbTimeout', 'deadline')
return {1, p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], tostring(deadlineAt), f[2]}
