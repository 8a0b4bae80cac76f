import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config';
import { devListenOverrides } from '../../src/cli/dev';
import { bytesToText, cell, queuesTable, readInput, taskTable } from '../../src/cli/format';

describe('dev listen overrides', () => {
  it('moves listeners left at their default to 127.0.0.1, same port', () => {
    expect(devListenOverrides(loadConfig({ env: {} }))).toEqual({
      'api.listen': '127.0.0.1:8801',
      'http.listen': '127.0.0.1:8802',
      'internal.listen': '127.0.0.1:8803',
      'metrics.listen': '127.0.0.1:9464',
    });
  });

  it('keeps an address the user set', () => {
    const c = loadConfig({ env: {}, args: ['--api.listen=0.0.0.0:9901', '--metrics.listen=127.0.0.2:9464'] });
    expect(devListenOverrides(c)).toEqual({ 'http.listen': '127.0.0.1:8802', 'internal.listen': '127.0.0.1:8803' });
  });
});

describe('enqueue --input', () => {
  it('takes a string as UTF-8', () => {
    expect(Buffer.from(readInput('{"a":"é"}')).toString('utf8')).toBe('{"a":"é"}');
    expect(readInput(undefined)).toHaveLength(0);
  });

  it('takes @file as raw bytes', () => {
    const f = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'zdmatch-cli-')), 'in.bin');
    fs.writeFileSync(f, Buffer.from([0, 1, 2, 255]));
    expect([...readInput(`@${f}`)]).toEqual([0, 1, 2, 255]);
    fs.rmSync(path.dirname(f), { recursive: true });
  });
});

describe('table cells', () => {
  it('prints text bytes as text and binary bytes as base64', () => {
    expect(bytesToText(Buffer.from('{"x":1}'))).toBe('{"x":1}');
    expect(bytesToText(Uint8Array.from([0, 255]))).toBe('base64:AP8=');
  });

  it('prints dates as ISO time, absent values as empty, objects as JSON', () => {
    expect(cell(undefined)).toBe('');
    expect(cell(new Date(Date.UTC(2030, 0, 2, 3, 4, 5)))).toBe('2030-01-02T03:04:05.000Z');
    expect(cell(3)).toBe('3');
    expect(cell({ message: 'boom', input: Buffer.from('x') })).toBe('{"message":"boom","input":"x"}');
  });

  it('formats queues and a task', () => {
    const now = Date.UTC(2030, 0, 1, 0, 1, 0);
    const q = queuesTable([{ flowType: 'order', stepType: 'charge', ready: 3, delayed: 1, running: 2, oldestReadyAt: new Date(now - 60000) }], now);
    expect(q).toContain('charge');
    expect(q).toContain('60s');
    const t = taskTable({ taskId: 'abc', state: 'QUEUED', input: Buffer.from('hi'), nodeId: '' });
    expect(t).toContain('abc');
    expect(t).toContain('hi');
    expect(t).not.toContain('nodeId');
  });

  it('keeps a task table within the terminal width, wrapping long values and cutting huge ones', () => {
    const outcome = { status: 'FAILED', error: { message: 'e'.repeat(300) } };
    const t = taskTable({ taskId: 'abc', input: Buffer.from('x'.repeat(200_000)), outcome }, 80);
    expect(Math.max(...t.split('\n').map((l) => l.length))).toBeLessThanOrEqual(80);
    expect(t.length).toBeLessThan(10_000);
    const text = t.replace(/[\s│─┼├┤┌┐└┘┬┴]/g, '');
    expect(text).toContain('e'.repeat(300));
    expect(text).toContain('(200000characters;--jsonprintsall)');
  });
});
