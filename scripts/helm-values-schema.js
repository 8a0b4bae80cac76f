#!/usr/bin/env node
/**
 * Writes deploy/helm/zdmatch/values.schema.json; the `config` part comes from
 * the compiled config schema (src/config/schema.ts), so run `npm run build`
 * first:  npm run build && node scripts/helm-values-schema.js
 * test/e2e/helm.test.ts fails when a config key is missing from the chart.
 */
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const { schema } = require(process.argv[2] ? path.resolve(process.argv[2]) : path.join(root, 'dist', 'config', 'schema.js'));
const { DECLINE_CACHE_MAX, PARTITIONS_MAX, PAYLOAD_BYTES_MAX, STREAMS_PER_CONNECTION_MAX } = require(path.join(root, 'dist', 'config', 'load.js'));

const DUR = { oneOf: [{ type: 'string', pattern: '^[0-9]+(\\.[0-9]+)?\\s*(ms|s|m|h|d)?$' }, { type: 'integer', minimum: 0 }] };
const fmt = (f) => {
  if (f === 'duration') return DUR;
  if (f === 'listen-address') return { type: 'string', pattern: '^(\\[[0-9a-fA-F:.]+\\]|[^\\s:]+):[0-9]{1,5}$' };
  if (f === 'positive-int') return { type: 'integer', minimum: 1 };
  if (f === 'node-id') return { type: 'string', maxLength: 128, pattern: '^[^\\s\\x00-\\x1f\\x7f]*$' };
  if (f === 'nat') return { type: 'integer', minimum: 0 };
  if (f === 'string-list') return { type: 'array', items: { type: 'string' } };
  if (f === String) return { type: 'string' };
  if (f === Number || f === 'number') return { type: 'number' };
  if (f === Boolean || f === 'boolean') return { type: 'boolean' };
  if (Array.isArray(f)) return { type: 'string', enum: f };
  throw new Error(`unknown config format ${String(f)}`);
};
// host:port as the node reads redis.clusterNodes and redis.sentinels (src/config/load.ts): an IPv6 host in
// brackets, a port of at most five digits from 1 to 65535 (leading zeros allowed); RE2 has no lookahead, so
// the range is spelt out. And redis.url as the node's own check of it.
const PORT = '(0{0,4}[1-9]|0{0,3}[1-9][0-9]|0{0,2}[1-9][0-9]{2}|0?[1-9][0-9]{3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])';
const HOST_PORT = `^(\\[[0-9a-fA-F:.]+\\]|[^\\s:\\[\\]]+):${PORT}$`;
const REDIS_URL = '^$|^rediss?://[^/?#\\s]*[^/?#\\s@:][^/?#\\s]*(/[0-9]*)?(\\?.*)?$';
// A DNS label: 1-63 letters, digits and inner hyphens.
const DNS_LABEL = '[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
const describe = (d) => ({ description: `${d.doc} (default ${JSON.stringify(d.default)})`, ...fmt(d.format) });
// Set per pod by the chart (env), not from values.
const chartOwned = new Set(['internal.advertise', 'cluster.nodeId']);
const config = { type: 'object', additionalProperties: false, properties: {} };
for (const [sec, keys] of Object.entries(schema)) {
  if (sec === 'redis' || sec === 'auth' || sec === 'tls') continue; // top-level values sections
  const props = {};
  for (const [k, d] of Object.entries(keys)) if (!chartOwned.has(`${sec}.${k}`)) props[k] = describe(d);
  // bounded by the node's own check (src/config/load.ts), which convict's formats cannot say
  if (sec === 'cluster') props.partitions.maximum = PARTITIONS_MAX;
  if (sec === 'limits') props.maxPayloadBytes.maximum = PAYLOAD_BYTES_MAX;
  if (sec === 'limits') props.maxStreamsPerConnection.maximum = STREAMS_PER_CONNECTION_MAX;
  if (sec === 'matching') props.unsupportedTypeCacheEntries.maximum = DECLINE_CACHE_MAX;
  config.properties[sec] = { type: 'object', additionalProperties: false, properties: props };
}
const r = schema.redis;
const str = { type: 'string' };
const anyObj = { type: 'object' };
const obj = (properties, extra = {}) => ({ type: 'object', additionalProperties: false, properties, ...extra });
const probe = obj({ periodSeconds: { type: 'integer', minimum: 1 }, failureThreshold: { type: 'integer', minimum: 1 }, timeoutSeconds: { type: 'integer', minimum: 1 } });
const out = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  title: 'zdmatch chart values',
  type: 'object',
  additionalProperties: false,
  properties: {
    global: anyObj,
    replicaCount: { type: 'integer', minimum: 0 },
    image: obj({ repository: { type: 'string', minLength: 1 }, tag: str, pullPolicy: { type: 'string', enum: ['Always', 'IfNotPresent', 'Never'] } }, { required: ['repository'] }),
    imagePullSecrets: { type: 'array', items: anyObj },
    nameOverride: str,
    fullnameOverride: str,
    serviceAccount: obj({ create: { type: 'boolean' }, name: str, annotations: anyObj, automount: { type: 'boolean' } }),
    podAnnotations: anyObj,
    podLabels: anyObj,
    config,
    redis: obj({
      url: { type: 'string', pattern: REDIS_URL, description: r.url.doc },
      existingSecret: str,
      existingSecretUrlKey: str,
      existingSecretPasswordKey: str,
      clusterNodes: { type: 'array', items: { type: 'string', pattern: HOST_PORT }, description: r.clusterNodes.doc },
      sentinels: { type: 'array', items: { type: 'string', pattern: HOST_PORT }, description: r.sentinels.doc },
      sentinelName: str,
      username: { type: 'string', description: r.username.doc },
      password: str,
      keyPrefix: { type: 'string', pattern: '^[^{}]*$', description: "no braces: each partition's keys carry the hash tag {p} after the prefix" },
      waitReplicas: { type: 'integer', minimum: 0 },
      tls: obj({
        enabled: { type: 'boolean', description: r.tls.doc },
        caSecret: { type: 'string', description: 'a Secret with the CA bundle (key caKey), mounted as redis.tlsCa; empty = the system CAs' },
        caKey: { type: 'string', minLength: 1 },
      }),
    }),
    auth: obj({
      enabled: { type: 'boolean' }, workerTokens: str, clientTokens: str, existingSecret: str,
      reloadInterval: describe(schema.auth.reloadInterval),
    }),
    tls: obj({
      enabled: { type: 'boolean' }, existingSecret: str, ca: { type: 'boolean', description: 'mount ca.crt from the Secret as tls.ca (mutual TLS on the peer mesh)' },
      peerServerName: {
        // As the node's host-name format (src/config/formats.ts), without its lookarounds (RE2 has none).
        type: 'string', maxLength: 253, pattern: `^$|^${DNS_LABEL}(\\.${DNS_LABEL})*\\.?$`,
        description: `${schema.tls.peerServerName.doc}; with tls.enabled the chart sets it, by default to the API Service's name (<fullname>.<namespace>.svc)`,
      },
    }),
    preStop: obj({ sleepSeconds: { type: 'integer', minimum: 0 } }),
    terminationGracePeriodSeconds: { type: 'integer', minimum: 1 },
    service: obj({ type: { type: 'string', enum: ['ClusterIP', 'NodePort', 'LoadBalancer'] }, annotations: anyObj, http: { type: 'boolean' } }),
    metricsService: obj({ annotations: anyObj }),
    probes: obj({ readiness: probe, startup: probe, liveness: probe }),
    resources: anyObj,
    podSecurityContext: anyObj,
    securityContext: anyObj,
    extraEnv: { type: 'array', items: { type: 'object', required: ['name'] } },
    nodeSelector: anyObj,
    tolerations: { type: 'array' },
    affinity: anyObj,
    topologySpreadConstraints: { type: 'array' },
    priorityClassName: str,
    podDisruptionBudget: obj({
      enabled: { type: 'boolean' }, maxUnavailable: { type: ['integer', 'string'] },
      unhealthyPodEvictionPolicy: { type: 'string', enum: ['', 'AlwaysAllow', 'IfHealthyBudget'] },
    }),
    networkPolicy: obj({ enabled: { type: 'boolean' }, clientsFrom: { type: 'array', items: { type: 'object' } } }),
    autoscaling: obj({
      enabled: { type: 'boolean' }, minReplicas: { type: 'integer', minimum: 1 }, maxReplicas: { type: 'integer', minimum: 1 },
      targetCPUUtilizationPercentage: { type: 'integer', minimum: 1, maximum: 100 },
    }),
    serviceMonitor: obj({ enabled: { type: 'boolean' }, interval: str, scrapeTimeout: str, labels: anyObj }),
    prometheusRule: obj({ enabled: { type: 'boolean' }, labels: anyObj }),
    grafanaDashboard: obj({ enabled: { type: 'boolean' }, labels: anyObj, annotations: anyObj }),
  },
};
fs.writeFileSync(path.join(root, 'deploy', 'helm', 'zdmatch', 'values.schema.json'), `${JSON.stringify(out, null, 2)}\n`);
