--[[ Removes a queue entry whose task is gone (dropStaleEntry). Every script
  that deletes a task removes its queue entry in the same call, so such an
  entry exists only where a task hash was deleted from outside (by hand, or
  evicted by a maxmemory policy that evicts keys without a TTL). Left there, it
  would come back with every refill of the queue's heads and, a window of them,
  hide the live tasks behind it. A task that exists is left alone.
  KEYS[1]  task hash        KEYS[2]  queue sorted set
  ARGV[1]  taskId
  Returns: 1 removed | 0 the task exists or the entry was not there
]]
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
return redis.call('ZREM', KEYS[2], ARGV[1])
