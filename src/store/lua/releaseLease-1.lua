--[[ Give a lease up, only if it is still ours.
  KEYS[1]  lease    ARGV[1] token "<node>:<epoch>"
  Returns: 1 released | 0 not ours
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
