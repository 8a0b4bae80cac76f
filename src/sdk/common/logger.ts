/** What the SDK logs through; pino, winston and console all fit. */
export interface SdkLogger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

const write = (fn: (...a: unknown[]) => void) => (msg: string, fields?: Record<string, unknown>) =>
  fields === undefined ? fn(`[zdmatch] ${msg}`) : fn(`[zdmatch] ${msg}`, fields);

/** The default: console, quiet at debug. */
export const consoleLogger: SdkLogger = {
  debug: () => {},
  info: write(console.info),
  warn: write(console.warn),
  error: write(console.error),
};
