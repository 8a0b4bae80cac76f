/**
 * `zdmatch enqueue --file steps.ndjson` (or `--file -` for stdin): one Step per
 * line, as a JSON object with the fields of the SDK's StepSpec.
 *
 * - The file is read line by line (readline over a stream): a file of any size
 *   loads in constant memory. Lines go in batches over the Client's enqueue
 *   stream, at most `inflight` batches at once; reading waits while they are out.
 * - Each line must carry its own stepExecutionId: enqueue is idempotent on
 *   (tenant, flowId, stepExecutionId), so loading the same file again creates
 *   nothing new. An id made up here (random, or from the line number) would make
 *   a re-run after an incident enqueue every Step a second time, or a different
 *   Step once lines were added or removed.
 * - A bad line (not JSON, a missing or wrong field, or one the node refuses
 *   naming its field) is reported with its line number and field, and the load
 *   goes on. The node validates a batch as a whole: the line it names is taken
 *   out and the rest sent again.
 * - A node that cannot be reached, or a call that timed out, is retried with
 *   backoff (enqueue is idempotent, so a batch sent twice creates its Steps
 *   once). A batch that still fails after the last retry stops the load, as
 *   does a refused credential: the lines after it are not sent, and the same
 *   file can be loaded again.
 * - A Step that a retry finds existing after a try whose reply was lost is counted
 *   apart (createdOrExisted): that try may have created it, or it existed before
 *   the load, and the node's reply says the same in both cases.
 */
import fs from 'node:fs';
import readline from 'node:readline';
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client, StepSpec } from '../sdk/client';
import { toStepSpec } from '../sdk/client/mappers';
import { STREAM_REQUEST_MAX_BYTES } from '../sdk/client/enqueue-lane';
import {
  backoffMs, type BackoffOptions, ZdDeadlineExceededError, ZdError, ZdProtocolError, ZdUnauthenticatedError, ZdUnavailableError,
} from '../sdk/common';
import { CliExit, EXIT_CONFIG } from './common';
import { fittedTable, oneLine } from './format';

export interface BulkOptions {
  /** Most Steps in one enqueue call. */
  batch: number;
  /** Enqueue calls in flight at once. */
  inflight: number;
  /** Retries of a batch that failed UNAVAILABLE or DEADLINE_EXCEEDED before the load stops. */
  retries: number;
  backoff?: BackoffOptions;
  /** Called for each line that failed, as soon as it is known. */
  onFailure(f: LineFailure): void;
  /** Called with what the load changed on its own (smaller batches for the node's limits.maxBatch). */
  onNotice?(text: string): void;
  /** Called as lines settle (the reading offset in bytes, for a progress bar). */
  onProgress?(s: BulkSummary, bytesRead: number): void;
}

export interface LineFailure {
  line: number;
  /** The line's field at fault ('' when the whole line is: not JSON, not an object, or a node-wide failure). */
  field: string;
  error: string;
}

export interface BulkSummary {
  /** Lines read, blank lines included. */
  lines: number;
  created: number;
  /** Steps that existed before the load (or ended within outcomes.retention). */
  alreadyExisted: number;
  /**
   * Steps a retry found existing after a try whose reply was lost (a timeout, a dropped
   * connection): created by that try, or existing before the load; the node does not tell.
   */
  createdOrExisted: number;
  failed: number;
  /** Lines read but not sent because the load stopped (stoppedAtLine). */
  notSent: number;
  elapsedSec: number;
  linesPerSec: number;
  /**
   * Set when a batch failed past its retries: the first line of that batch. The load stopped
   * there; lines after it may not have been sent (load the same file again).
   */
  stoppedAtLine?: number;
  stopReason?: string;
}

/** The fields a line may have: StepSpec's, with input as text or base64. */
const REQUIRED = ['tenant', 'flowId', 'flowType', 'stepType', 'stepExecutionId'] as const;
const OPTIONAL = new Set([
  'input', 'inputBase64', 'readyAt', 'flowDeadline', 'methodTimeoutMs', 'heartbeatTimeoutMs', 'retryPolicy', 'stickyWorkerId',
]);
const RETRY_POLICY = new Set(['maxAttempts', 'initialIntervalMs', 'backoffCoefficient', 'maxIntervalMs', 'nonRetryable']);
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

class LineError extends Error {
  constructor(readonly field: string, message: string) {
    super(message);
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A date field: epoch ms, or an ISO 8601 text. */
function dateField(field: string, v: unknown): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v === 'number') return v;
  if (typeof v === 'string') {
    const ms = Date.parse(v);
    if (Number.isFinite(ms)) return ms;
  }
  throw new LineError(field, `must be epoch ms or an ISO 8601 date, got ${JSON.stringify(v)}`);
}

/** One line as a StepSpec, checked as the SDK checks it; throws LineError naming the field. */
export function parseLine(text: string): StepSpec {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (err) {
    throw new LineError('', `not JSON (${(err as Error).message})`);
  }
  if (!isObject(v)) throw new LineError('', `must be a JSON object, got ${Array.isArray(v) ? 'an array' : JSON.stringify(v)}`);
  for (const key of Object.keys(v)) {
    if (!(REQUIRED as readonly string[]).includes(key) && !OPTIONAL.has(key)) throw new LineError(key, 'is not a field of a Step');
  }
  for (const key of REQUIRED) {
    const s = v[key];
    if (s === undefined) {
      throw new LineError(key, key === 'stepExecutionId' ? 'is required (it makes loading the file again idempotent)' : 'is required');
    }
    if (typeof s !== 'string' || s === '') throw new LineError(key, `must be a non-empty string, got ${JSON.stringify(s)}`);
  }
  if (v.input !== undefined && v.inputBase64 !== undefined) throw new LineError('inputBase64', 'give input or inputBase64, not both');
  let input: Uint8Array | undefined;
  if (v.input !== undefined) {
    if (typeof v.input !== 'string') throw new LineError('input', `must be a string (inputBase64 for bytes), got ${JSON.stringify(v.input)}`);
    input = Buffer.from(v.input, 'utf8');
  } else if (v.inputBase64 !== undefined) {
    if (typeof v.inputBase64 !== 'string' || !BASE64.test(v.inputBase64)) throw new LineError('inputBase64', 'must be a base64 string');
    input = Buffer.from(v.inputBase64, 'base64');
  }
  if (v.retryPolicy !== undefined) {
    if (!isObject(v.retryPolicy)) throw new LineError('retryPolicy', `must be an object, got ${JSON.stringify(v.retryPolicy)}`);
    for (const key of Object.keys(v.retryPolicy)) {
      if (!RETRY_POLICY.has(key)) throw new LineError(`retryPolicy.${key}`, 'is not a field of a retry policy');
    }
  }
  const spec: StepSpec = {
    tenant: v.tenant as string, flowId: v.flowId as string, flowType: v.flowType as string, stepType: v.stepType as string,
    stepExecutionId: v.stepExecutionId as string,
  };
  if (input) spec.input = input;
  const readyAt = dateField('readyAt', v.readyAt);
  if (readyAt !== undefined) spec.readyAt = readyAt;
  const flowDeadline = dateField('flowDeadline', v.flowDeadline);
  if (flowDeadline !== undefined) spec.flowDeadline = flowDeadline;
  for (const key of ['methodTimeoutMs', 'heartbeatTimeoutMs', 'stickyWorkerId', 'retryPolicy'] as const) {
    if (v[key] !== undefined) (spec as unknown as Record<string, unknown>)[key] = v[key];
  }
  // What the SDK would refuse, refused here for this line alone (not for its whole batch).
  try {
    toStepSpec(spec, 'line');
  } catch (err) {
    const m = /option line\.(\S+): (.*)$/s.exec((err as Error).message);
    if (m) throw new LineError(m[1]!, m[2]!);
    throw new LineError('', (err as Error).message);
  }
  return spec;
}

/** A node's field name (`retry_policy.max_attempts`, `ready_at_ms`) as a line names it. */
export function lineField(wire: string): string {
  const camel = wire.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase());
  return camel.replace(/^(readyAt|flowDeadline)Ms$/, '$1');
}

/** The Step a node's INVALID_ARGUMENT names (`steps[3].flow_id: reason`), if it names one. */
function namedStep(err: unknown): { index: number; field: string; reason: string } | undefined {
  if (!(err instanceof ZdError) || err.code !== 'ZD_INVALID_ARGUMENT') return undefined;
  const m = /steps\[(\d+)\](?:\.(\S+?))?: (.*)$/s.exec(err.message);
  return m ? { index: Number(m[1]), field: lineField(m[2] ?? ''), reason: m[3]! } : undefined;
}

/** The node's limits.maxBatch, when it refused a batch for holding more Steps than that. */
function batchLimit(err: unknown): number | undefined {
  if (!(err instanceof ZdError) || err.code !== 'ZD_INVALID_ARGUMENT') return undefined;
  const m = /^ZD_INVALID_ARGUMENT: steps: holds \d+ Steps; the limit is (\d+)/.exec(err.message);
  return m && Number(m[1]) > 0 ? Number(m[1]) : undefined;
}

const retryable = (err: unknown) => err instanceof ZdUnavailableError || err instanceof ZdDeadlineExceededError;
/** Failures of every line alike (a credential refused, a node of another protocol): the load stops at once. */
const fatal = (err: unknown) => err instanceof ZdUnauthenticatedError || err instanceof ZdProtocolError;

/** At least the bytes a Step takes in a request (as the enqueue lane counts them). */
function boundOfBytes(s: StepSpec): number {
  return 128 + (s.input?.length ?? 0) + 3 * (s.tenant.length + s.flowId.length + s.flowType.length + s.stepType.length
    + s.stepExecutionId.length + (s.stickyWorkerId?.length ?? 0) + JSON.stringify(s.retryPolicy ?? {}).length);
}

interface Item {
  line: number;
  spec: StepSpec;
  /** A try whose reply was lost carried this Step: the node may have created it then. */
  sentUnanswered?: boolean;
}

/**
 * The input of `--file`: a readable stream of the file, or stdin for `-`, and the
 * file's size when known. A missing file or a directory is a usage error, exit 2.
 */
export function openInput(file: string): { stream: Readable; size?: number } {
  if (file === '-') return { stream: process.stdin };
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch (err) {
    throw new CliExit(`--file: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, EXIT_CONFIG);
  }
  const st = fs.fstatSync(fd);
  if (st.isDirectory()) {
    fs.closeSync(fd);
    throw new CliExit(`--file: ${file} is a directory`, EXIT_CONFIG);
  }
  return { stream: fs.createReadStream('', { fd }), ...(st.isFile() ? { size: st.size } : {}) };
}

/** Loads every line of `input`; failures go to `opts.onFailure` as they happen. */
export async function loadSteps(client: Client, input: Readable, opts: BulkOptions): Promise<BulkSummary> {
  const started = performance.now();
  const s = { lines: 0, created: 0, alreadyExisted: 0, createdOrExisted: 0, failed: 0, notSent: 0 };
  let bytesRead = 0;
  let stop: { line: number; reason: string } | undefined;
  let batchSize = opts.batch;
  const summary = (): BulkSummary => {
    const elapsedSec = (performance.now() - started) / 1000;
    return {
      ...s,
      elapsedSec: Math.round(elapsedSec * 100) / 100,
      linesPerSec: elapsedSec > 0 ? Math.round(s.lines / elapsedSec) : 0,
      ...(stop ? { stoppedAtLine: stop.line, stopReason: stop.reason } : {}),
    };
  };
  const fail = (line: number, field: string, error: string) => {
    s.failed++;
    opts.onFailure({ line, field, error: oneLine(error) });
  };
  const progress = () => opts.onProgress?.(summary(), bytesRead);

  /** One batch, until each of its lines is created, found, or failed. */
  const send = async (batch: Item[]): Promise<void> => {
    let items = batch;
    let attempt = 0;
    while (items.length > 0) {
      try {
        const results = await client.enqueueSteps(items.map((i) => i.spec));
        results.forEach((r, k) => {
          if (r.created) s.created++;
          else if (items[k]!.sentUnanswered) s.createdOrExisted++;
          else s.alreadyExisted++;
        });
        return;
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        if (retryable(err)) for (const i of items) i.sentUnanswered = true;
        if (retryable(err) && attempt < opts.retries && !stop) {
          await sleep(backoffMs(attempt++, opts.backoff));
          continue;
        }
        if (retryable(err) || fatal(err)) {
          const reason = retryable(err) ? `${message} (after ${attempt + 1} attempts)` : message;
          // Batches in flight fail together: the stop is told at the earliest line not loaded.
          if (!stop || items[0]!.line < stop.line) stop = { line: items[0]!.line, reason };
          for (const i of items) fail(i.line, '', `not loaded: ${message}`);
          return;
        }
        const limit = batchLimit(err);
        if (limit !== undefined && items.length > limit) {
          // --batch above the node's limits.maxBatch: batches of its limit from here on.
          if (limit < batchSize) {
            batchSize = limit;
            opts.onNotice?.(`the node takes at most ${limit} Steps per call (limits.maxBatch): batches of ${limit} from line ${items[0]!.line} on`);
          }
          for (let k = 0; k < items.length; k += limit) await send(items.slice(k, k + limit));
          return;
        }
        const named = namedStep(err);
        const at = named ? items[named.index] : undefined;
        if (named && at) {
          fail(at.line, named.field, named.reason);
          items = items.filter((i) => i !== at);
          continue;
        }
        if (items.length > 1) {
          // Refused as a whole without naming a Step (a tenant the credential does not cover, a
          // request too large): each line alone, for a verdict of its own.
          for (const i of items) await send([i]);
          return;
        }
        fail(items[0]!.line, '', message);
        return;
      }
    }
  };

  const inflight = new Set<Promise<void>>();
  const launch = async (batch: Item[]) => {
    while (inflight.size >= opts.inflight) await Promise.race(inflight);
    if (stop) {
      s.notSent += batch.length;
      return;
    }
    const p: Promise<void> = send(batch).finally(() => {
      inflight.delete(p);
      progress();
    });
    inflight.add(p);
  };

  const rl = readline.createInterface({ input, crlfDelay: Infinity });
  let batch: Item[] = [];
  let batchBytes = 0;
  try {
    for await (const text of rl) {
      s.lines++;
      bytesRead += Buffer.byteLength(text) + 1;
      if (text.trim() === '') continue;
      let spec: StepSpec;
      try {
        spec = parseLine(text);
      } catch (err) {
        if (!(err instanceof LineError)) throw err;
        fail(s.lines, err.field, err.message);
        continue;
      }
      // Batches stay under what the enqueue stream carries in one request; a larger Step goes alone.
      const bytes = boundOfBytes(spec);
      if (batch.length > 0 && (batch.length >= batchSize || batchBytes + bytes >= STREAM_REQUEST_MAX_BYTES)) {
        await launch(batch);
        batch = [];
        batchBytes = 0;
      }
      batch.push({ line: s.lines, spec });
      batchBytes += bytes;
      if (stop) break;
    }
    if (batch.length > 0) await launch(batch);
    await Promise.all(inflight);
  } finally {
    rl.close();
    if (input !== process.stdin) input.destroy();
  }
  return summary();
}

/** The summary as a two-column table. */
export function summaryTable(r: BulkSummary): string {
  const rows: [string, string][] = [
    ['lines', String(r.lines)],
    ['created', String(r.created)],
    ['already existed', String(r.alreadyExisted)],
    ...(r.createdOrExisted > 0 ? [['created or existed (reply lost, retried)', String(r.createdOrExisted)] as [string, string]] : []),
    ['failed', String(r.failed)],
    ...(r.notSent > 0 ? [['not sent (stopped)', String(r.notSent)] as [string, string]] : []),
    ['elapsed', `${r.elapsedSec}s`],
    ['lines/s', String(r.linesPerSec)],
  ];
  if (r.stoppedAtLine !== undefined) rows.push(['stopped at line', String(r.stoppedAtLine)]);
  return fittedTable(['', 'Steps'], rows);
}
