/** Worker options: Options → defaults and validation → CompiledWorkerOptions. */
import { randomBytes } from 'node:crypto';
import * as os from 'node:os';
import { PROTOCOL_VERSION } from '../../wire';
import { backoffProblem, consoleLogger, KEEPALIVE_MS, MAX_TIMER_MS, type BackoffOptions, type Credential, type SdkLogger, type TlsOptions } from '../common';
import { checkedCredential } from '../common/credential-option';
import { kindOf } from '../common/kind-of';
import { PONG_INTERVAL_MS } from './task';
import type { FlowTypeHandlers, SlotKindName } from './types';

/**
 * A node answers a Register at once. A stream still unanswered after this long is
 * most likely never opened: HTTP/2 holds back the streams of a connection past the
 * peer's limit on concurrent streams (the node's limits.maxStreamsPerConnection, or
 * a proxy's own: nginx's http2_max_concurrent_streams is 128, HAProxy's
 * tune.h2.max-concurrent-streams 100), and one connection carries every slot.
 */
export const UNREGISTERED_WARN_MS = 10_000;

/**
 * How long a slot waits for its credential (a function or a file) before its stream
 * fails and is tried again after a backoff: a Client call's default timeout.
 */
export const CREDENTIAL_TIMEOUT_MS = 30_000;

/**
 * @internal Not part of the public API and not documented: knobs for tests
 * that check the server side of the protocol against a real node.
 */
export interface WorkerInternalOptions {
  /** Protocol version sent in Register and the `zd-protocol-version` header. @default PROTOCOL_VERSION */
  protocolVersion?: number;
  /** Pong cadence while a task runs, in ms. @default PONG_INTERVAL_MS (20 s) */
  pongIntervalMs?: number;
  /** The channel's HTTP/2 keepalive PING interval, in ms. @default KEEPALIVE_MS (30 s) */
  keepaliveMs?: number;
  /** How long a slot stream waits for its Registered before the worker warns of it, in ms. @default UNREGISTERED_WARN_MS (10 s) */
  unregisteredWarnMs?: number;
  /** How long a slot waits for its credential before it gives up and tries again, in ms. @default CREDENTIAL_TIMEOUT_MS (30 s) */
  credentialTimeoutMs?: number;
}

export interface WorkerOptions {
  /** Server address, `host:port` (or `https://host:port` for TLS). */
  address: string;
  /** Tenant the worker serves. */
  tenant: string;
  /**
   * Identifies this worker process for sticky routing and the unsupported-type
   * cache; must change when the process restarts.
   * @default `<hostname>-<pid>-<random hex>`, new for every Worker
   */
  appWorkerId?: string;
  /** Handlers by flow type; the keys are the flow types registered. */
  flowTypes: Record<string, FlowTypeHandlers>;
  /** Number of slots (one stream each). @default os.availableParallelism() */
  maxConcurrentTasks?: number;
  /**
   * Slots reserved for RPCs (RPC-only streams), taken out of
   * `maxConcurrentTasks`. Must be an integer ≥ 0 and < maxConcurrentTasks.
   * @default 1 when maxConcurrentTasks ≥ 2, else 0 (with one warning)
   */
  reservedRpcTasks?: number;
  /** How long stop() lets running handlers finish before aborting them, in ms (at most 2^31 - 1). @default 30000 */
  stopDrainTimeout?: number;
  /**
   * Make start() reject with a PullRegistrationError on the first permanent
   * rejection that leaves its slot kind with no registered stream, instead
   * of retrying. @default false
   */
  stopOnPermanentStreamRejection?: boolean;
  /**
   * Bearer token sent as `authorization` metadata: a string, `{ file }` (re-read when it changes) or a
   * function; resolved when each stream opens and on every reconnect. One that does not resolve within 30 s
   * fails that stream, which is tried again after its backoff. One that can never resolve (a string that is no token, trailing newline included) is a TypeError here. @default none
   */
  credential?: Credential;
  /** TLS: `true` for the system roots, or `{ ca }` (file path or PEM). @default plaintext unless the address is https:// */
  tls?: TlsOptions | boolean;
  /** Where the worker logs. @default console, quiet at debug */
  logger?: SdkLogger;
  /** Backoff between reconnects of a slot stream. @default { initialMs: 100, coefficient: 2, maxMs: 10000 } */
  reconnectBackoff?: BackoffOptions;
  /** @internal See WorkerInternalOptions; not part of the public API. */
  _internal?: WorkerInternalOptions;
}

export interface CompiledWorkerOptions {
  readonly address: string;
  readonly tenant: string;
  readonly appWorkerId: string;
  readonly flowTypes: Readonly<Record<string, FlowTypeHandlers>>;
  readonly maxConcurrentTasks: number;
  readonly reservedRpcTasks: number;
  readonly stopDrainTimeout: number;
  readonly stopOnPermanentStreamRejection: boolean;
  readonly credential: Credential | undefined;
  readonly tls: TlsOptions | boolean | undefined;
  readonly logger: SdkLogger;
  readonly reconnectBackoff: BackoffOptions;
  /** Sent in Register and in the `zd-protocol-version` header of Connect. */
  readonly protocolVersion: number;
  /** Pong cadence while a task runs, in ms. */
  readonly pongIntervalMs: number;
  readonly keepaliveMs: number;
  /** How long a slot stream waits for its Registered before the worker warns of it, in ms. */
  readonly unregisteredWarnMs: number;
  /** How long a slot waits for its credential before it gives up and tries again, in ms. */
  readonly credentialTimeoutMs: number;
  /** Logged once by start() (a Worker built and never started says nothing). */
  readonly startWarnings: readonly string[];
  /** One entry per slot, in order: the shared slots, then the reserved ones. */
  readonly slotKinds: readonly SlotKindName[];
}

export function defaultAppWorkerId(): string {
  return `${os.hostname()}-${process.pid}-${randomBytes(4).toString('hex')}`;
}

function fail(field: string, reason: string): never {
  throw new TypeError(`Worker option ${field}: ${reason}`);
}

function isNonNegativeInt(n: unknown): n is number {
  return typeof n === 'number' && Number.isInteger(n) && n >= 0;
}

/** An object of named entries (not null, not an array). */
function isTable(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Resolves defaults and validates; throws a TypeError naming the option. */
export function compileWorkerOptions(options: WorkerOptions): CompiledWorkerOptions {
  const logger = options.logger ?? consoleLogger;
  // Checked here: a logger without one of them threw inside the stream's frame handler,
  // and every slot reconnected for ever without the worker ever becoming ready.
  if (!isTable(logger) && typeof logger !== 'function') fail('logger', `must be an object with debug, info, warn and error methods, got ${kindOf(logger)}`);
  for (const level of ['debug', 'info', 'warn', 'error'] as const) {
    if (typeof (logger as unknown as Record<string, unknown>)[level] !== 'function') fail(`logger.${level}`, 'must be a function');
  }
  for (const field of ['address', 'tenant'] as const) {
    const value: unknown = options[field];
    if (!value) fail(field, 'is required');
    if (typeof value !== 'string') fail(field, `must be a string, got ${kindOf(value)}`);
  }
  if (options.appWorkerId !== undefined && typeof options.appWorkerId !== 'string') {
    fail('appWorkerId', `must be a string, got ${kindOf(options.appWorkerId)}`);
  }
  // 'false' from an environment variable is truthy: it would stop the worker it meant to keep.
  if (options.stopOnPermanentStreamRejection !== undefined && typeof options.stopOnPermanentStreamRejection !== 'boolean') {
    fail('stopOnPermanentStreamRejection', `must be a boolean, got ${kindOf(options.stopOnPermanentStreamRejection)}`);
  }
  const flowTypes = options.flowTypes ?? {};
  if (!isTable(flowTypes)) fail('flowTypes', `must be an object of handlers by flow type, got ${kindOf(flowTypes)}`);
  if (Object.keys(flowTypes).length === 0) fail('flowTypes', 'must name at least one flow type');
  for (const [flowType, h] of Object.entries(flowTypes)) {
    // A flow type whose entry holds no steps/rpcs tables (`{ order: { charge } }`, steps:
    // forgotten) was registered all the same, and every task of it declined as unknown.
    if (!isTable(h)) fail(`flowTypes.${flowType}`, `must be { steps?, rpcs? }, got ${kindOf(h)}`);
    for (const key of Object.keys(h)) {
      if (key !== 'steps' && key !== 'rpcs') fail(`flowTypes.${flowType}.${key}`, 'is neither steps nor rpcs: handlers go in steps (by Step type) or rpcs (by RPC name)');
    }
    for (const [kind, table] of [['steps', h.steps], ['rpcs', h.rpcs]] as const) {
      if (table != null && !isTable(table)) fail(`flowTypes.${flowType}.${kind}`, `must be an object of handlers by name, got ${kindOf(table)}`);
      for (const [name, fn] of Object.entries(table ?? {})) {
        if (typeof fn !== 'function') fail(`flowTypes.${flowType}.${kind}.${name}`, 'must be a function');
      }
    }
  }

  const limit = options.maxConcurrentTasks ?? os.availableParallelism();
  if (!isNonNegativeInt(limit) || limit < 1) fail('maxConcurrentTasks', `must be an integer ≥ 1, got ${limit}`);

  let reserve = options.reservedRpcTasks;
  const startWarnings: string[] = [];
  if (reserve === undefined) {
    reserve = limit >= 2 ? 1 : 0;
    if (limit === 1) {
      startWarnings.push(
        'maxConcurrentTasks is 1, so no slot is reserved for RPCs: RPCs may wait behind long-running Steps. ' +
          'Set maxConcurrentTasks to at least 2, or set reservedRpcTasks explicitly.',
      );
    }
  } else if (!isNonNegativeInt(reserve) || reserve >= limit) {
    fail('reservedRpcTasks', `must be an integer ≥ 0 and < maxConcurrentTasks (${limit}), got ${reserve}`);
  }

  const stopDrainTimeout = options.stopDrainTimeout ?? 30_000;
  // Past MAX_TIMER_MS (Infinity included) the drain timer would fire at once, and
  // stop() abort every running handler instead of waiting for it.
  if (typeof stopDrainTimeout !== 'number' || !(stopDrainTimeout >= 0 && stopDrainTimeout <= MAX_TIMER_MS)) {
    fail('stopDrainTimeout', `must be a number of ms in [0, ${MAX_TIMER_MS}], got ${stopDrainTimeout}`);
  }

  // A NaN or negative delay would turn reconnects into a hot loop against the node.
  const backoffBad = backoffProblem(options.reconnectBackoff ?? {});
  if (backoffBad) fail(`reconnectBackoff.${backoffBad.field}`, backoffBad.reason);

  const pongIntervalMs = options._internal?.pongIntervalMs ?? PONG_INTERVAL_MS;
  if (!(pongIntervalMs > 0)) fail('_internal.pongIntervalMs', `must be > 0, got ${pongIntervalMs}`);

  const keepaliveMs = options._internal?.keepaliveMs ?? KEEPALIVE_MS;
  if (!(keepaliveMs > 0)) fail('_internal.keepaliveMs', `must be > 0, got ${keepaliveMs}`);

  const unregisteredWarnMs = options._internal?.unregisteredWarnMs ?? UNREGISTERED_WARN_MS;
  if (!(unregisteredWarnMs > 0 && unregisteredWarnMs <= MAX_TIMER_MS)) fail('_internal.unregisteredWarnMs', `must be in (0, ${MAX_TIMER_MS}], got ${unregisteredWarnMs}`);

  const credentialTimeoutMs = options._internal?.credentialTimeoutMs ?? CREDENTIAL_TIMEOUT_MS;
  if (!(credentialTimeoutMs > 0 && credentialTimeoutMs <= MAX_TIMER_MS)) fail('_internal.credentialTimeoutMs', `must be in (0, ${MAX_TIMER_MS}], got ${credentialTimeoutMs}`);

  const slotKinds: SlotKindName[] = [
    ...Array<SlotKindName>(limit - reserve).fill('STEP_AND_RPC'),
    ...Array<SlotKindName>(reserve).fill('RPC_ONLY'),
  ];
  return {
    address: options.address,
    tenant: options.tenant,
    appWorkerId: options.appWorkerId || defaultAppWorkerId(),
    flowTypes,
    maxConcurrentTasks: limit,
    reservedRpcTasks: reserve,
    stopDrainTimeout,
    stopOnPermanentStreamRejection: options.stopOnPermanentStreamRejection ?? false,
    credential: checkedCredential('Worker', options.credential),
    tls: options.tls,
    logger,
    reconnectBackoff: options.reconnectBackoff ?? {},
    protocolVersion: options._internal?.protocolVersion ?? PROTOCOL_VERSION,
    pongIntervalMs,
    keepaliveMs,
    unregisteredWarnMs,
    credentialTimeoutMs,
    slotKinds,
    startWarnings,
  };
}
