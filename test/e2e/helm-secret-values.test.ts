/**
 * The chart (deploy/helm/zdmatch) reads Redis and the bearer tokens either
 * from values it stores in a Secret of its own (redis.url, redis.password,
 * auth.workerTokens, auth.clientTokens) or from an existing Secret
 * (redis.existingSecret, auth.existingSecret), never both: with an existing
 * Secret the chart renders none of its own, so values given beside it would
 * never reach the node (a redis.url dropped that way leaves the node with no
 * Redis, and it fails at startup). Such a value set is refused at render
 * time, naming the values; each way alone renders and the node loads it.
 * So is redis.password beside redis.url: the node applies redis.password to
 * Redis Cluster and Sentinel only, and a single Redis takes its password
 * from the URL.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { loadConfig } from '../../src/config';
import { createRedis } from '../../src/store/redis';
import { useChart, type K8sObject } from '../helpers/helm';

const NO_AUTH = ['--set', 'auth.enabled=false'];
const REDIS = ['--set', 'redis.url=redis://redis:6379'];

const { render } = useChart();

/** The node's config as `zdmatch serve` loads it in the pod, with `env` standing in for the Secrets' keys. */
function boot(objs: K8sObject[], env: Record<string, string>) {
  const cm = objs.find((o) => o.kind === 'ConfigMap' && o.data?.['config.yaml'])!;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zd-helm-secrets-'));
  try {
    const file = path.join(dir, 'config.yaml');
    fs.writeFileSync(file, cm.data['config.yaml']);
    return loadConfig({ file, env: { ZD_CLUSTER_NODE_ID: 'zdmatch-0', ZD_INTERNAL_ADVERTISE: '10.0.0.7:8803', ...env }, args: [] });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const podEnvNames = (objs: K8sObject[]) =>
  (objs.find((o) => o.kind === 'Deployment')!.spec.template.spec.containers[0].env as { name: string }[]).map((e) => e.name);

describe('redis values beside redis.existingSecret', () => {
  it.each([
    ['redis.url', [...REDIS, '--set', 'redis.existingSecret=redis-auth']],
    ['redis.password (Redis Cluster)', ['--set', 'redis.clusterNodes={r-0:6379}', '--set', 'redis.password=pw', '--set', 'redis.existingSecret=redis-auth']],
  ])('refuses %s together with redis.existingSecret, which would drop it', (_label, args) => {
    const r = render([...NO_AUTH, ...args]);
    expect(r.ok).toBe(false);
    expect(r.stderr).toContain('or redis.existingSecret, not both');
  });

  it('still renders and boots with either alone', () => {
    const own = render([...NO_AUTH, ...REDIS]);
    expect(own.ok).toBe(true);
    expect(own.objs.find((o) => o.kind === 'Secret' && o.metadata.name === 'zdmatch-redis')!.stringData['redis-url']).toBe('redis://redis:6379');
    expect(boot(own.objs, { ZD_REDIS_URL: 'redis://redis:6379' }).redis.url).toBe('redis://redis:6379');
    const existing = render([...NO_AUTH, '--set', 'redis.existingSecret=redis-auth']);
    expect(existing.ok).toBe(true);
    expect(podEnvNames(existing.objs)).toContain('ZD_REDIS_URL');
    expect(boot(existing.objs, { ZD_REDIS_URL: 'redis://redis:6379' }).redis.url).toBe('redis://redis:6379');
  });
});

describe('token values beside auth.existingSecret', () => {
  it.each([
    ['auth.workerTokens', ['--set', 'auth.workerTokens=tokens: []']],
    ['auth.clientTokens', ['--set', 'auth.clientTokens=tokens: []']],
  ])('refuses %s together with auth.existingSecret, which would drop it', (_label, args) => {
    const r = render([...REDIS, '--set', 'auth.existingSecret=zdmatch-tokens', ...args]);
    expect(r.ok).toBe(false);
    expect(r.stderr).toContain('or auth.existingSecret, not both');
  });

  it('still renders with either alone', () => {
    const inline = render([...REDIS, '--set', 'auth.workerTokens=tokens: []']);
    expect(inline.ok).toBe(true);
    expect(inline.objs.find((o) => o.kind === 'Secret' && o.metadata.name === 'zdmatch-auth')!.stringData['worker-tokens.yaml']).toContain('tokens: []');
    const existing = render([...REDIS, '--set', 'auth.existingSecret=zdmatch-tokens']);
    expect(existing.ok).toBe(true);
    expect(boot(existing.objs, { ZD_REDIS_URL: 'redis://redis:6379' }).auth.workerTokensFile).toBe('/etc/zdmatch/auth/worker-tokens.yaml');
  });
});

describe('redis.password beside redis.url', () => {
  /** The password on the Redis client the node makes for this config (lazyConnect: nothing is dialled). */
  function clientPassword(env: Record<string, string>): string | undefined {
    const client = createRedis(loadConfig({ env: { ...env, ZD_AUTH_ENABLED: 'false' }, args: [] }).redis, { lazyConnect: true });
    try {
      return (client instanceof Redis ? client.options.password : undefined) ?? undefined; // ioredis says null for none
    } finally {
      client.disconnect();
    }
  }

  it('never reaches a single Redis: the node takes the password from the URL only', () => {
    expect(clientPassword({ ZD_REDIS_URL: 'redis://redis:6379', ZD_REDIS_PASSWORD: 'pw' })).toBeUndefined();
    expect(clientPassword({ ZD_REDIS_URL: 'redis://:pw@redis:6379' })).toBe('pw');
  });

  it('is refused, saying to put the password in the URL', () => {
    const r = render([...NO_AUTH, ...REDIS, '--set', 'redis.password=pw']);
    expect(r.ok).toBe(false);
    expect(r.stderr).toContain('redis.password');
    expect(r.stderr).toContain('redis://:PASSWORD@');
    const inUrl = render([...NO_AUTH, '--set', 'redis.url=redis://:pw@redis:6379']);
    expect(inUrl.ok).toBe(true);
    expect(podEnvNames(inUrl.objs)).not.toContain('ZD_REDIS_PASSWORD');
  });
});
