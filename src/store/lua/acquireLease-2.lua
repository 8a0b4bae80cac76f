--[[ Acquire (or keep) a partition lease; the epoch grows on every new acquire.
  KEYS[1]  lease string "<node>:<epoch>"     KEYS[2]  epoch counter
  ARGV[1]  node id  ARGV[2] lease TTL (ms)
  Returns: {1, epoch} acquired or still ours (TTL refreshed) | {0, holder, pttl} held by another node
  (pttl: the holder's lease runs out in that many ms unless renewed; the caller retries then)
]]
local cur = redis.call('GET', KEYS[1])
if cur then
  local node, epoch = string.match(cur, '^(.*):(%d+)$')
  if node == ARGV[1] then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
    return {1, epoch}
  end
  return {0, cur, redis.call('PTTL', KEYS[1])}
end
local epoch = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], ARGV[1] .. ':' .. epoch, 'PX', ARGV[2])
return {1, tostring(epoch)}
