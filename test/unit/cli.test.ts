import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config';
import { devListenDefaults } from '../../src/cli/dev';
import { bytesToText, cell, fittedTable, jsonReplacer, queuesTable, readInput, taskTable } from '../../src/cli/format';

describe('dev listen defaults', () => {
  const dev = (args: string[], env: Record<string, string> = {}) => loadConfig({ env, args, defaults: devListenDefaults() });

  it('binds listeners nobody set to 127.0.0.1, same port', () => {
    const c = dev([]);
    expect([c.api.listen, c.http.listen, c.internal.listen, c.metrics.listen]).toEqual(['127.0.0.1:8801', '127.0.0.1:8802', '127.0.0.1:8803', '127.0.0.1:9464']);
  });

  it('keeps an address the user set, 0.0.0.0 at the default port too (a flag, or env)', () => {
    const c = dev(['--api.listen=0.0.0.0:8801', '--metrics.listen=127.0.0.2:9464'], { ZD_HTTP_LISTEN: '0.0.0.0:8802' });
    expect([c.api.listen, c.http.listen, c.internal.listen, c.metrics.listen]).toEqual(['0.0.0.0:8801', '0.0.0.0:8802', '127.0.0.1:8803', '127.0.0.2:9464']);
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

/** Each cell of a table's rows, its wrapped lines joined again (heads included). */
function columnTexts(table: string): string[] {
  const cells: string[] = [];
  let row: string[] = [];
  for (const line of table.split('\n')) {
    if (!line.startsWith('│')) {
      cells.push(...row);
      row = [];
      continue;
    }
    line.split('│').slice(1, -1).forEach((c, i) => {
      row[i] = (row[i] ?? '') + c.trim();
    });
  }
  return cells;
}

describe('table cells', () => {
  it('prints text bytes as text and binary bytes as base64', () => {
    expect(bytesToText(Buffer.from('{"x":1}'))).toBe('{"x":1}');
    expect(bytesToText(Uint8Array.from([0, 255]))).toBe('base64:AP8=');
  });

  it('keeps text over several lines, or with tabs, as text', () => {
    expect(bytesToText(Buffer.from('{\n\t"x": 1\r\n}'))).toBe('{\n\t"x": 1\r\n}');
    expect(bytesToText(Buffer.from([0x7b, 0x1b, 0x7d]))).toBe('base64:ext9');
    expect(bytesToText(Buffer.from([0xff, 0xfe]))).toBe('base64://4=');
  });

  it('prints bigints as numbers and bytes as text in JSON, a Buffer as its toJSON shape too', () => {
    expect(JSON.stringify({ n: 12n, b: Buffer.from('hi'), u: Uint8Array.from([0]) }, jsonReplacer)).toBe('{"n":12,"b":"hi","u":"base64:AA=="}');
  });

  it('gives a queue with nothing ready no age, and one whose oldest entry is stamped ahead of this clock an age of 0s', () => {
    const now = Date.UTC(2030, 0, 1, 0, 1, 0);
    const rows = (t: string) => t.split('\n').map((l) => l.split('│').map((c) => c.trim())).filter((r) => r.length > 2).slice(1);
    const q = queuesTable([
      { flowType: 'order', stepType: 'charge', ready: 0, delayed: 4, running: 0, oldestReadyAt: undefined },
      { flowType: 'order', stepType: 'ship', ready: 1, delayed: 0, running: 0, oldestReadyAt: new Date(now + 3000) },
      { flowType: 'order', stepType: 'pack', ready: 1, delayed: 0, running: 0, oldestReadyAt: new Date(now - 1600) },
    ], now, Infinity);
    expect(rows(q).map((r) => r.slice(1, -1))).toEqual([
      ['order', 'charge', '0', '4', '0', '', ''],
      ['order', 'ship', '1', '0', '0', '2030-01-01T00:01:03.000Z', '0s'],
      ['order', 'pack', '1', '0', '0', '2030-01-01T00:00:58.400Z', '2s'],
    ]);
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
    expect(taskTable({ taskId: 'abc', input: new Uint8Array() })).not.toContain('input');
  });

  it('fits a listing to a narrow terminal by wrapping its widest columns, cutting no id', () => {
    const now = Date.UTC(2030, 0, 1, 0, 1, 0);
    const flowType = 'order-fulfilment-with-a-long-flow-type-name';
    const q = queuesTable([{ flowType, stepType: 'charge-the-card-of-the-customer', ready: 123456, delayed: 0, running: 64, oldestReadyAt: new Date(now - 5000) }], now, 72);
    const lines = q.split('\n');
    expect(Math.max(...lines.map((l) => l.length))).toBeLessThanOrEqual(72);
    expect(lines.length).toBeGreaterThan(5); // wrapped
    const text = columnTexts(q).join(' ');
    expect(text).toContain(flowType);
    expect(text).toContain('charge-the-card-of-the-customer');
    expect(text).toContain('2030-01-01T00:00:55.000Z');
    expect(text).toContain('123456');
    // Heads wrap between words, never inside one.
    expect(q).toMatch(/│ oldest\s/);
    expect(q).not.toMatch(/oldes\s/);
  });

  it('leaves a listing that fits, and piped output, one line a row', () => {
    const rows = [['n-1', '10.0.0.1:8802', '32', '2030-01-01T00:00:00.000Z'], ['n-2', '10.0.0.2:8802', '32', '2030-01-01T00:00:00.000Z']];
    const head = ['node', 'peer address', 'partitions', 'last heartbeat'];
    for (const width of [200, Infinity]) {
      const t = fittedTable(head, rows, width);
      expect(t.split('\n')).toHaveLength(7); // top, head, rule, row, rule, row, bottom
    }
    // Columns at their floor still show every character: the table is wider than asked, nothing is cut.
    const tight = fittedTable(head, rows, 10);
    expect(columnTexts(tight)).toContain('10.0.0.1:8802');
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
