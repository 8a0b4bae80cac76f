/** Small pieces for tests that drive the SDK against a real node. */
import type { Registry } from 'prom-client';
import { Client, type Worker } from '../../src';

export interface LogLine {
  level: string;
  msg: string;
  fields?: Record<string, unknown>;
}

/** An SdkLogger that records every line, for assertions. */
export function recordingLogger() {
  const lines: LogLine[] = [];
  const at = (level: string) => (msg: string, fields?: Record<string, unknown>) => void lines.push({ level, msg, fields });
  return {
    lines,
    count: (msg: string, fields: Record<string, unknown> = {}) =>
      lines.filter((l) => l.msg === msg && Object.entries(fields).every(([k, v]) => l.fields?.[k] === v)).length,
    debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'),
  };
}
export type RecordingLogger = ReturnType<typeof recordingLogger>;

export interface Gate {
  /** Resolves once opened. */
  readonly opened: Promise<void>;
  open(): void;
}

/** A promise a test opens by hand (to hold a handler, say). */
export function gate(): Gate {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { opened, open };
}

/** Resolves when the signal aborts, with its reason. */
export function aborted(signal: AbortSignal): Promise<unknown> {
  if (signal.aborted) return Promise.resolve(signal.reason);
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(signal.reason), { once: true }));
}

/** The value of one series of a metric in a registry (0 when the series does not exist yet). */
export async function metricValue(registry: Registry, name: string, labels: Record<string, string> = {}): Promise<number> {
  const metric = registry.getSingleMetric(name);
  if (!metric) throw new Error(`no metric ${name}`);
  const { values } = await metric.get();
  const hit = values.find((v) => Object.entries(labels).every(([k, want]) => String(v.labels[k]) === want));
  return hit?.value ?? 0;
}

/**
 * Starts `w` and waits for its slots to register, then opens a Client of
 * `clientAddress`; both are stopped by `cleanups` after the test. Resolves with
 * the Client and how `w.start()` ended ('stopped', or its error).
 */
export async function registeredWithClient(
  w: Worker, clientAddress: string, cleanups: Array<() => unknown>,
): Promise<{ c: Client; running: Promise<unknown> }> {
  const running = w.start().then(() => 'stopped', (err: unknown) => err);
  cleanups.push(() => w.stop());
  await w.waitPullRegistered(AbortSignal.timeout(10_000));
  const c = new Client({ address: clientAddress, defaultTimeoutMs: 10_000 });
  cleanups.push(() => c.close());
  return { c, running };
}
