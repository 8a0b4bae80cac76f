--[[ Acquire a partition lease; the epoch grows on every acquire.
  KEYS[1]  lease string "<node>:<epoch>"     KEYS[2]  epoch counter
  ARGV[1]  node id  ARGV[2] lease TTL (ms)
  Returns: {1, epoch} acquired | {0, holder, pttl} held by another node
  (pttl: the holder's lease runs out in that many ms unless renewed; the caller retries then)
  The caller asks only for a lease it does not hold. One that carries its own node id is
  another boot's of that id (crashed, or frozen and replaced) or one the caller unloaded as
  lapsed: it is taken under a new epoch, so that the old token's renewals and owner-initiated
  scripts are refused from now on.
]]
local cur = redis.call('GET', KEYS[1])
if cur then
  local node = string.match(cur, '^(.*):%d+$')
  if node ~= ARGV[1] then return {0, cur, redis.call('PTTL', KEYS[1])} end
end
local epoch = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], ARGV[1] .. ':' .. epoch, 'PX', ARGV[2])
return {1, tostring(epoch)}
