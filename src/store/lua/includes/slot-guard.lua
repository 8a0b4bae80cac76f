-- Prepended to every script (store/scripts.ts). On a Redis Cluster, a hash slot
-- mid-migration (resharding) has part of its partition's keys on each of two
-- primaries: a script would read some of them as absent, and one it reached
-- after its first write would fail the call with the writes before it kept.
-- Two absent keys of the slot tell: a stable slot answers (0), a migrating or
-- importing one refuses them (ASK/TRYAGAIN) before this script has written
-- anything. TRYAGAIN: the client retries until the slot has moved. A key without a
-- hash tag (the member set) hashes whole: the probes take it as their tag.
do
  local tag = string.find(KEYS[1], '{', 1, true) and KEYS[1] or ('{' .. KEYS[1] .. '}')
  local probe = redis.pcall('EXISTS', tag .. '\0slot-probe-1', tag .. '\0slot-probe-2')
  if type(probe) == 'table' and probe.err then
    return redis.error_reply('TRYAGAIN the hash slot of ' .. KEYS[1] .. ' is migrating between primaries')
  end
end
