/** A node's log, kept for a test to read: every JSON line pino writes, parsed, in order. */
import { Writable } from 'node:stream';
import pino from 'pino';
import type { Logger } from '../../src/util/logger';

export function captureLogs<T = Record<string, unknown>>(level = 'info'): { logger: Logger; lines: T[] } {
  const lines: T[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) lines.push(JSON.parse(line) as T);
      done();
    },
  });
  return { logger: pino({ level }, sink), lines };
}
