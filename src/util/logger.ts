import pino from 'pino';

export type Logger = pino.Logger;

/** Structured JSON logs on stdout; `level` comes from log.level. */
export function createLogger(level: string, name = 'zdmatch'): Logger {
  return pino({ name, level, base: { pid: process.pid } });
}

/** A logger that writes nothing (SDK default, tests). */
export const silentLogger: Logger = pino({ level: 'silent' });
