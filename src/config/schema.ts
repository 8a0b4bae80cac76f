/**
 * The one config schema (DESIGN §9). Every key has a default, an env name
 * (ZD_<SECTION>_<KEY>) and a `--section.key` flag. Durations are strings such
 * as "200ms" or "10s" and become milliseconds.
 */
export const schema = {
  api: {
    listen: { doc: 'gRPC API (workers, producers, engines)', format: 'listen-address', default: '0.0.0.0:8801', env: 'ZD_API_LISTEN' },
  },
  http: {
    listen: { doc: 'HTTP/JSON fetch-and-lock surface', format: 'listen-address', default: '0.0.0.0:8802', env: 'ZD_HTTP_LISTEN' },
  },
  internal: {
    listen: { doc: 'internal peer mesh (gRPC)', format: 'listen-address', default: '0.0.0.0:8803', env: 'ZD_INTERNAL_LISTEN' },
    advertise: {
      doc: 'address peers dial to reach this node; empty = the listen host (127.0.0.1 for 0.0.0.0 or [::]) and the bound port',
      format: String, default: '', env: 'ZD_INTERNAL_ADVERTISE',
    },
  },
  metrics: {
    listen: { doc: 'Prometheus /metrics and /healthz', format: 'listen-address', default: '0.0.0.0:9464', env: 'ZD_METRICS_LISTEN' },
  },
  matching: {
    dispatchWait: { doc: 'RPC: total time to find a worker', format: 'duration', default: '10s', env: 'ZD_MATCHING_DISPATCH_WAIT' },
    stickyWait: { doc: 'time to try a connected sticky worker; must not exceed dispatchWait', format: 'duration', default: '5s', env: 'ZD_MATCHING_STICKY_WAIT' },
    syncMatchWait: { doc: 'time to try any worker of the flow type before the durable queue; > 0', format: 'duration', default: '200ms', env: 'ZD_MATCHING_SYNC_MATCH_WAIT' },
    headsResyncInterval: { doc: 'periodic heads resync; 0 disables', format: 'duration', default: '5m', env: 'ZD_MATCHING_HEADS_RESYNC_INTERVAL' },
    maxConcurrentTasksCap: { doc: 'streams per app worker id on a node', format: 'positive-int', default: 256, env: 'ZD_MATCHING_MAX_CONCURRENT_TASKS_CAP' },
    maxStreams: { doc: 'registered streams on a node', format: 'positive-int', default: 100000, env: 'ZD_MATCHING_MAX_STREAMS' },
    unsupportedTypeCacheEntries: { doc: 'LRU of declined (tenant, flowType, type, appWorkerId)', format: 'positive-int', default: 10000, env: 'ZD_MATCHING_UNSUPPORTED_TYPE_CACHE_ENTRIES' },
    maxQueueLength: { doc: 'longest queue name "<tenant>:<flowType>:<stepType>" (and tenant, step type, app worker id), in characters', format: 'positive-int', default: 256, env: 'ZD_MATCHING_MAX_QUEUE_LENGTH' },
    maxFlowTypes: { doc: 'most flow types in one registration', format: 'positive-int', default: 256, env: 'ZD_MATCHING_MAX_FLOW_TYPES' },
    maxFlowTypeLength: { doc: 'longest registered flow type', format: 'positive-int', default: 256, env: 'ZD_MATCHING_MAX_FLOW_TYPE_LENGTH' },
    pingInterval: { doc: 'Ping frames on idle worker streams, and HTTP/2 PINGs on every connection (dropped when one is unanswered for as long)', format: 'duration', default: '20s', env: 'ZD_MATCHING_PING_INTERVAL' },
    busyStreamSilence: { doc: 'a busy worker stream that sends nothing (Pong, Heartbeat, result) for this long is reset and its attempt fails as worker lost; workers Pong every 20s while a task runs (older SDKs, protocol 3, do not, and are exempt); 0 disables', format: 'duration', default: '60s', env: 'ZD_MATCHING_BUSY_STREAM_SILENCE' },
  },
  limits: {
    maxPayloadBytes: { doc: 'largest Step input, output or RPC payload', format: 'positive-int', default: 1048576, env: 'ZD_LIMITS_MAX_PAYLOAD_BYTES' },
    maxBatch: { doc: 'most Steps in one EnqueueSteps call', format: 'positive-int', default: 1000, env: 'ZD_LIMITS_MAX_BATCH' },
    maxWait: { doc: 'longest WaitOutcome/ConsumeOutcomes wait, and the run time of an InvokeRpc that sets no timeout', format: 'duration', default: '60s', env: 'ZD_LIMITS_MAX_WAIT' },
    maxLongPolls: {
      doc: 'waiting calls (WaitOutcome, ConsumeOutcomes, FetchAndLock with a wait, gRPC and HTTP) a node holds at once; past it RESOURCE_EXHAUSTED',
      format: 'positive-int', default: 10000, env: 'ZD_LIMITS_MAX_LONG_POLLS',
    },
    maxStreamsPerConnection: {
      doc: 'concurrent HTTP/2 streams (calls, worker slots) per client connection on the API listener (grpc.max_concurrent_streams)',
      format: 'positive-int', default: 1000, env: 'ZD_LIMITS_MAX_STREAMS_PER_CONNECTION',
    },
    httpHeadersTimeout: { doc: 'HTTP listener: time to receive a request\'s headers', format: 'duration', default: '10s', env: 'ZD_LIMITS_HTTP_HEADERS_TIMEOUT' },
    httpRequestTimeout: {
      doc: 'HTTP listener: time to receive a whole request, and for a client to take a response; must exceed fetch.maxWait (long polls)',
      format: 'duration', default: '90s', env: 'ZD_LIMITS_HTTP_REQUEST_TIMEOUT',
    },
    httpMaxHeaders: { doc: 'HTTP listener: most headers in a request', format: 'positive-int', default: 100, env: 'ZD_LIMITS_HTTP_MAX_HEADERS' },
    httpKeepAliveTimeout: {
      doc: 'HTTP listener: how long an idle connection stays open; keep it above the load balancer\'s idle timeout (often 60s)',
      format: 'duration', default: '65s', env: 'ZD_LIMITS_HTTP_KEEP_ALIVE_TIMEOUT',
    },
  },
  redis: {
    url: { doc: 'redis:// or rediss:// URL of a single Redis; empty = not configured', format: String, default: '', env: 'ZD_REDIS_URL', sensitive: true },
    clusterNodes: { doc: 'host:port seeds of a Redis Cluster (instead of url)', format: 'string-list', default: [] as string[], env: 'ZD_REDIS_CLUSTER_NODES' },
    sentinels: { doc: 'host:port of Sentinels (instead of url)', format: 'string-list', default: [] as string[], env: 'ZD_REDIS_SENTINELS' },
    natMap: {
      doc: 'announced-host:port=reachable-host:port pairs: a Cluster node or Sentinel-named primary that announces the first address is dialled at the second (NAT, containers); Cluster or Sentinel only',
      format: 'string-list', default: [] as string[], env: 'ZD_REDIS_NAT_MAP',
    },
    sentinelName: { doc: 'Sentinel master name', format: String, default: 'mymaster', env: 'ZD_REDIS_SENTINEL_NAME' },
    username: { doc: 'Redis ACL user (Cluster and Sentinel: given to the Sentinels too), with redis.password; empty = the default user', format: String, default: '', env: 'ZD_REDIS_USERNAME' },
    password: { doc: 'Redis password (Cluster and Sentinel: given to the Sentinels too)', format: String, default: '', env: 'ZD_REDIS_PASSWORD', sensitive: true },
    tls: { doc: 'TLS to Redis: Cluster nodes, the Sentinels and the primary they name, or redis.url (a rediss:// url is TLS either way)', format: 'boolean', default: false, env: 'ZD_REDIS_TLS' },
    tlsCa: { doc: "PEM file of the CAs that Redis's certificates are checked against, re-read when it changes (new connections use it); empty = the system CAs", format: String, default: '', env: 'ZD_REDIS_TLS_CA' },
    keyPrefix: { doc: 'prefix of every key; no { or } (the keys of partition p carry the hash tag {p} after it)', format: String, default: 'zd', env: 'ZD_REDIS_KEY_PREFIX' },
    waitReplicas: { doc: 'replicas to WAIT for after each acknowledged enqueue, and before outcomes read are answered; 0 = none', format: 'nat', default: 0, env: 'ZD_REDIS_WAIT_REPLICAS' },
  },
  cluster: {
    partitions: { doc: 'number of partitions; fixed for the life of a cluster', format: 'positive-int', default: 64, env: 'ZD_CLUSTER_PARTITIONS' },
    nodeId: { doc: 'this node id; empty = hostname plus a random suffix', format: 'node-id', default: '', env: 'ZD_CLUSTER_NODE_ID' },
    heartbeat: { doc: 'membership heartbeat', format: 'duration', default: '2s', env: 'ZD_CLUSTER_HEARTBEAT' },
    nodeTtl: { doc: 'a node is live while its heartbeat is younger than this', format: 'duration', default: '10s', env: 'ZD_CLUSTER_NODE_TTL' },
    leaseTtl: { doc: 'partition lease TTL; renewed every third of it', format: 'duration', default: '10s', env: 'ZD_CLUSTER_LEASE_TTL' },
  },
  steps: {
    maxAttempts: { doc: 'default retry policy: attempts', format: 'positive-int', default: 3, env: 'ZD_STEPS_MAX_ATTEMPTS' },
    initialInterval: { doc: 'default retry policy: first backoff', format: 'duration', default: '1s', env: 'ZD_STEPS_INITIAL_INTERVAL' },
    backoffCoefficient: { doc: 'default retry policy: backoff growth', format: 'number', default: 2, env: 'ZD_STEPS_BACKOFF_COEFFICIENT' },
    maxInterval: { doc: 'default retry policy: longest backoff', format: 'duration', default: '100s', env: 'ZD_STEPS_MAX_INTERVAL' },
  },
  fetch: {
    lockDuration: { doc: 'default lock duration', format: 'duration', default: '30s', env: 'ZD_FETCH_LOCK_DURATION' },
    maxLockDuration: { doc: 'ceiling of lockDuration', format: 'duration', default: '10m', env: 'ZD_FETCH_MAX_LOCK_DURATION' },
    wait: { doc: 'default long-poll wait', format: 'duration', default: '20s', env: 'ZD_FETCH_WAIT' },
    maxWait: { doc: 'ceiling of wait', format: 'duration', default: '60s', env: 'ZD_FETCH_MAX_WAIT' },
    maxTasks: { doc: 'default tasks per fetch', format: 'positive-int', default: 10, env: 'ZD_FETCH_MAX_TASKS' },
    maxMaxTasks: { doc: 'ceiling of maxTasks', format: 'positive-int', default: 100, env: 'ZD_FETCH_MAX_MAX_TASKS' },
    maxLockExpiries: { doc: 'expired-lock claims before a task turns terminal', format: 'positive-int', default: 5, env: 'ZD_FETCH_MAX_LOCK_EXPIRIES' },
  },
  outcomes: {
    retention: { doc: 'how long an ended task keeps its outcome (WaitOutcome, idempotent re-enqueue); at least 1s', format: 'duration', default: '24h', env: 'ZD_OUTCOMES_RETENTION' },
    redeliverAfter: { doc: 'default idle time before an unacked outcome is redelivered; > 0', format: 'duration', default: '30s', env: 'ZD_OUTCOMES_REDELIVER_AFTER' },
  },
  auth: {
    enabled: {
      doc: 'require bearer tokens (docs/security.md); on unless set to false explicitly (`zdmatch dev` does), which logs a WARN banner',
      format: 'boolean', default: true, env: 'ZD_AUTH_ENABLED',
    },
    workerTokensFile: { doc: 'YAML file of worker tokens and their tenants', format: String, default: '', env: 'ZD_AUTH_WORKER_TOKENS_FILE' },
    clientTokensFile: { doc: 'YAML file of client (and operator) tokens and their tenants', format: String, default: '', env: 'ZD_AUTH_CLIENT_TOKENS_FILE' },
    reloadInterval: { doc: 'periodic check of the tokens files (besides fs.watch)', format: 'duration', default: '2s', env: 'ZD_AUTH_RELOAD_INTERVAL' },
  },
  tls: {
    enabled: { doc: 'serve the API, HTTP and peer listeners over TLS', format: 'boolean', default: false, env: 'ZD_TLS_ENABLED' },
    cert: { doc: 'PEM certificate file', format: String, default: '', env: 'ZD_TLS_CERT' },
    key: { doc: 'PEM private key file', format: String, default: '', env: 'ZD_TLS_KEY', sensitive: true },
    ca: {
      doc: 'PEM CA file: peers must present a certificate it signed (mutual TLS on the peer mesh) and are verified against it',
      format: String, default: '', env: 'ZD_TLS_CA',
    },
    peerServerName: {
      doc: 'name the peer mesh checks every peer\'s certificate against (TLS server name and :authority) instead of the host it advertises; empty = that host. For peers that advertise IPs and a certificate that names a DNS name (the Helm chart sets its Service name)',
      format: 'host-name', default: '', env: 'ZD_TLS_PEER_SERVER_NAME',
    },
  },
  log: {
    level: { doc: 'log level', format: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], default: 'info', env: 'ZD_LOG_LEVEL' },
  },
  drain: {
    timeout: { doc: 'graceful drain on SIGTERM before forcing', format: 'duration', default: '30s', env: 'ZD_DRAIN_TIMEOUT' },
  },
};
