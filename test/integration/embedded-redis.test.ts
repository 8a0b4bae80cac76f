import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  findOnPath, REDIS_NOT_FOUND_MESSAGE, RedisNotFoundError, sendCommand, startEmbeddedRedis, type EmbeddedRedis,
} from '../../src/store/embedded-redis';
import { isPortFree } from '../../src/store/embedded-redis';
import { freePort } from '../helpers/ports';
import { uniquePrefix, useEmbeddedRedis } from '../helpers/redis';

describe('startEmbeddedRedis', () => {
  const started: EmbeddedRedis[] = [];
  afterAll(async () => {
    await Promise.all(started.map((r) => r.stop()));
  });
  const start = async (...args: Parameters<typeof startEmbeddedRedis>) => {
    const r = await startEmbeddedRedis(...args);
    started.push(r);
    return r;
  };

  it('starts a private server on 127.0.0.1 that answers, without persistence', async () => {
    const r = await start();
    expect(r.host).toBe('127.0.0.1');
    expect(r.url).toBe(`redis://127.0.0.1:${r.port}`);
    expect(fs.statSync(r.dataDir).isDirectory()).toBe(true);
    expect(r.dataDir.startsWith(os.tmpdir())).toBe(true);
    expect(await sendCommand(r.port, ['PING'])).toBe('PONG');
    expect(await sendCommand(r.port, ['SET', 'k', 'v'])).toBe('OK');
    expect(await sendCommand(r.port, ['GET', 'k'])).toBe('v');
    expect(await sendCommand(r.port, ['CONFIG', 'GET', 'appendonly'])).toEqual(['appendonly', 'no']);
    expect(await sendCommand(r.port, ['CONFIG', 'GET', 'save'])).toEqual(['save', '']);
    expect(await sendCommand(r.port, ['CONFIG', 'GET', 'bind'])).toEqual(['bind', '127.0.0.1']);
  });

  it('stop() ends the process, frees the port and removes its temp dir; it is idempotent', async () => {
    const r = await start();
    await r.stop();
    expect(r.process.exitCode !== null || r.process.signalCode !== null).toBe(true);
    expect(fs.existsSync(r.dataDir)).toBe(false);
    expect(await isPortFree(r.port)).toBe(true);
    await expect(r.stop()).resolves.toBeUndefined();
    await expect(sendCommand(r.port, ['PING'])).rejects.toThrow();
  });

  it('stop() kills a server that does not end on SIGTERM once stopTimeoutMs has passed', async () => {
    const r = await start({ stopTimeoutMs: 200 });
    r.process.kill('SIGSTOP'); // stopped: SIGTERM stays pending, SIGKILL still ends it
    const t0 = Date.now();
    const stopped = await Promise.race([r.stop().then(() => 'stopped'), new Promise((resolve) => setTimeout(() => resolve('still running'), 3000))]);
    if (stopped !== 'stopped') r.process.kill('SIGKILL'); // leave no stopped server behind
    expect(stopped).toBe('stopped');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(150);
    expect(r.process.signalCode).toBe('SIGKILL');
    expect(fs.existsSync(r.dataDir)).toBe(false);
  });

  it('runs several servers side by side on distinct ports', async () => {
    const rs = await Promise.all([start(), start(), start()]);
    expect(new Set(rs.map((r) => r.port)).size).toBe(3);
    expect(new Set(rs.map((r) => r.dataDir)).size).toBe(3);
    await Promise.all(rs.map(async (r) => expect(await sendCommand(r.port, ['PING'])).toBe('PONG')));
  });

  it('honours an explicit port', async () => {
    const port = await freePort();
    const r = await start({ port });
    expect(r.port).toBe(port);
    expect(await sendCommand(port, ['PING'])).toBe('PONG');
  });

  it('fails clearly when an explicit port is taken', async () => {
    const r = await start();
    await expect(startEmbeddedRedis({ port: r.port })).rejects.toThrow(/port|exited|Address/i);
  });

  it('keeps data across a restart with appendonly yes and a data dir of its own', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'zdmatch-aof-test-'));
    try {
      const first = await startEmbeddedRedis({ dataDir, args: ['--appendonly', 'yes', '--appendfsync', 'always'] });
      expect(await sendCommand(first.port, ['CONFIG', 'GET', 'appendonly'])).toEqual(['appendonly', 'yes']);
      expect(await sendCommand(first.port, ['SET', 'durable', '1'])).toBe('OK');
      first.kill('SIGKILL'); // a crash: nothing flushed on the way out
      await first.exited();
      expect(fs.existsSync(dataDir)).toBe(true);
      await first.stop(); // keeps a caller's dir
      expect(fs.existsSync(dataDir)).toBe(true);

      const second = await startEmbeddedRedis({ dataDir, port: first.port, args: ['--appendonly', 'yes'] });
      try {
        expect(await sendCommand(second.port, ['GET', 'durable'])).toBe('1');
      } finally {
        await second.stop();
      }
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('reports a bad argument with redis-server output', async () => {
    await expect(startEmbeddedRedis({ args: ['--no-such-option', 'x'] })).rejects.toThrow(/exited .* before it was ready/);
  });

  describe('without redis-server on PATH', () => {
    const saved = process.env.PATH;
    afterEach(() => {
      process.env.PATH = saved;
    });

    it('throws one line telling how to install it', async () => {
      process.env.PATH = '';
      expect(findOnPath('redis-server')).toBeUndefined();
      const err = await startEmbeddedRedis().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RedisNotFoundError);
      expect((err as Error).message).toBe('redis-server not found on PATH; install it with: apt-get install -y redis-server');
      expect((err as Error).message).toBe(REDIS_NOT_FOUND_MESSAGE);
    });

    it('also when PATH only holds directories without it', async () => {
      process.env.PATH = [os.tmpdir(), '/nonexistent'].join(path.delimiter);
      await expect(startEmbeddedRedis()).rejects.toThrow(REDIS_NOT_FOUND_MESSAGE);
    });

    it('passes over a directory named redis-server to the server further along PATH', async () => {
      const real = findOnPath('redis-server', saved);
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zdmatch-path-'));
      try {
        fs.mkdirSync(path.join(dir, 'redis-server'));
        process.env.PATH = [dir, path.dirname(real!)].join(path.delimiter);
        expect(findOnPath('redis-server')).toBe(real);
        const r = await start();
        expect(await sendCommand(r.port, ['PING'])).toBe('PONG');
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  });
});

describe('test helper useEmbeddedRedis', () => {
  const redis = useEmbeddedRedis();

  it('gives each test a distinct key prefix', async () => {
    const a = uniquePrefix();
    const b = uniquePrefix();
    expect(a).not.toBe(b);
    expect(a).toMatch(/^[A-Za-z0-9-]+$/);
    await redis.command('SET', `${a}:k`, 'a');
    await redis.command('SET', `${b}:k`, 'b');
    expect(await redis.command('GET', `${a}:k`)).toBe('a');
    await redis.flushScripts();
  });
});
