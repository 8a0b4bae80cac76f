--[[ Redis's clock, read on the node that holds KEYS[1] (the member set).
  On a Redis Cluster a keyless TIME goes to any primary: one that stopped answering
  held the heartbeat, though the primary of the member set answered.
  KEYS[1]  the member set (routing only)
  Returns: { seconds, microseconds }, as TIME
]]
return redis.call('TIME')
