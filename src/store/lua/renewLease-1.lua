--[[ Renew a lease by compare-and-set on its exact token.
  KEYS[1]  lease    ARGV[1] token "<node>:<epoch>"  ARGV[2] lease TTL (ms)
  Returns: 1 renewed | 0 lost (expired or taken)
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
