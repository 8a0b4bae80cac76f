--[[ Take a leaving node's entry out of the member set, only if no later boot of its id wrote it.
  A ZREM sent while Redis did not answer can land after a new boot of the same node id has
  heartbeaten: by score (Redis time of the heartbeat, see cluster/membership.ts) the leaving
  boot tells its own entry from the later boot's, which scores after every beat it sent.
  KEYS[1]  the member set    ARGV[1] node id    ARGV[2] the newest score this boot wrote
  Returns: 1 removed | 0 absent, or written by a later boot
]]
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and tonumber(score) <= tonumber(ARGV[2]) then
  redis.call('ZREM', KEYS[1], ARGV[1])
  return 1
end
return 0
