--[[ Drops a queue from its partition's set of queues once its sorted set is gone
  (pruneQueue). The set holds the queues that hold entries (DESIGN §2); every
  script that adds an entry adds the queue to the set in the same call, so a
  queue whose sorted set does not exist holds nothing and can go. Left there,
  every queue name ever used would be counted, loaded and resynced for ever.
  KEYS[1]  queues set       KEYS[2]  the queue's sorted set
  ARGV[1]  queue name
  Returns: 1 dropped | 0 the queue holds entries, or was not in the set
]]
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
return redis.call('SREM', KEYS[1], ARGV[1])
