/**
 * WorkerTaskService.Connect: one bidi stream per slot. The first frame must
 * be Register; then worker frames are handled in order while the slot's
 * channel feeds the response stream.
 */
import type { CallContext } from 'nice-grpc';
import { principalOf, requireTenant } from '../auth/auth';
import type { Config } from '../config';
import { invalidArgument, storeUnavailable, zdError, ZdError } from '../errors';
import type { Gateway } from '../gateway/gateway';
import type { Slot, SlotRegistration } from '../gateway/slot';
import type { Logger } from '../util/logger';
import { pb, PROTOCOL_VERSION } from '../wire';
import { decodeProblem, hasInvalidText } from '../wire/adapter';
import { requireName } from './validation';

/** The longest Register.sdk_name and sdk_version taken (worker.proto). */
const MAX_SDK_TEXT = 64;

/** Oldest worker protocol this server still serves. */
export const MIN_PROTOCOL_VERSION = 3;
/** The first worker protocol whose SDKs Pong while a task runs (DESIGN §5); older ones stay silent. */
export const PONG_PROTOCOL_VERSION = 4;
/** The first worker protocol whose Register must name its slot kind (SDKs with reserved RPC slots). */
export const RESERVED_SLOTS_PROTOCOL_VERSION = 4;

export function validateRegister(r: pb.IRegister | null | undefined, c: Config): SlotRegistration {
  if (!r) throw zdError('ZD_NOT_REGISTERED');
  const m = c.matching;
  const version = r.protocol_version ?? 0;
  if (version < MIN_PROTOCOL_VERSION || version > PROTOCOL_VERSION) {
    throw zdError('ZD_PROTOCOL_MISMATCH', { client: version, server: PROTOCOL_VERSION });
  }
  const requested = r.flow_types ?? [];
  const tenant = requireName('register.tenant', r.tenant, m.maxQueueLength, 'matching.maxQueueLength');
  const appWorkerId = requireName('register.app_worker_id', r.app_worker_id, m.maxQueueLength, 'matching.maxQueueLength');
  if (requested.length === 0) throw invalidArgument('register.flow_types', 'must name at least one flow type');
  if (requested.length > m.maxFlowTypes) {
    throw invalidArgument('register.flow_types', `has ${requested.length} entries; the limit is ${m.maxFlowTypes} (matching.maxFlowTypes)`);
  }
  const flowTypes = requested.map((f, i) => requireName(`register.flow_types[${i}]`, f, m.maxFlowTypeLength, 'matching.maxFlowTypeLength'));
  let kind: SlotRegistration['kind'];
  if (r.slot_kind === pb.SlotKind.STEP_AND_RPC) kind = 'STEP_AND_RPC';
  else if (r.slot_kind === pb.SlotKind.RPC_ONLY) kind = 'RPC_ONLY';
  // Older SDKs (protocol 3) keep working on this server: those from before reserved RPC slots
  // name no kind, and their one kind of slot runs Steps and RPCs alike.
  else if (!r.slot_kind && version < RESERVED_SLOTS_PROTOCOL_VERSION) kind = 'STEP_AND_RPC';
  else throw invalidArgument('register.slot_kind', 'must be STEP_AND_RPC or RPC_ONLY');
  if ((r.task_limit ?? 0) > 1_000_000) throw invalidArgument('register.task_limit', 'is not plausible');
  // Refused, not cut (DESIGN §11.6): a cut name would say another SDK than the one that runs.
  const sdkName = r.sdk_name ?? '';
  const sdkVersion = r.sdk_version ?? '';
  if (sdkName.length > MAX_SDK_TEXT) throw invalidArgument('register.sdk_name', `is longer than ${MAX_SDK_TEXT} characters`);
  if (sdkVersion.length > MAX_SDK_TEXT) throw invalidArgument('register.sdk_version', `is longer than ${MAX_SDK_TEXT} characters`);
  return {
    tenant, appWorkerId, flowTypes: [...new Set(flowTypes)], kind, taskLimit: r.task_limit ?? 0,
    sdk: `${sdkName}/${sdkVersion}`,
    acceptsTaskAfterAck: r.accepts_task_after_ack === true,
    acceptsTaskInAck: r.accepts_task_after_ack === true && r.accepts_task_in_ack === true,
    quietWhileBusy: version < PONG_PROTOCOL_VERSION,
  };
}

export function workerService(gateway: Gateway, config: Config, log: Logger) {
  return {
    async *connect(requests: AsyncIterable<pb.WorkerFrame>, context: CallContext): AsyncIterable<pb.IServerFrame> {
      const it = requests[Symbol.asyncIterator]();
      const first = await it.next();
      if (first.done) return;
      requireDecoded(first.value);
      const registration = validateRegister(first.value.register, config);
      // The stream's credential was checked when it opened (auth middleware); a rotated token does not end it.
      requireTenant(principalOf(context), registration.tenant);
      const slot = gateway.register(registration);
      const ending: StreamEnding = {};
      const reader = readFrames(it, slot, gateway, log, context.signal, ending);
      try {
        for await (const frame of slot.out) yield frame;
      } finally {
        // The response side ended (the drain's deadline passed, the call went
        // away): release the slot even if the request side is still open. Not a
        // graceful end: the worker did not half-close and may still be running
        // what it holds, so that attempt fails (DESIGN §6: "stream reset after
        // drain timeout") instead of going back under the same attempt number.
        // A worker that did half-close was released by readFrames already.
        await gateway.unregister(slot, false);
        void reader;
      }
      // A frame the protocol forbids ended the stream: the worker learns why.
      if (ending.error) throw ending.error;
    },
  };
}

/** Why the server ended a stream, when a worker's frame broke the protocol. */
interface StreamEnding {
  error?: Error;
}

async function readFrames(
  it: AsyncIterator<pb.WorkerFrame>, slot: Slot, gateway: Gateway, log: Logger, signal: AbortSignal, ending: StreamEnding,
): Promise<void> {
  let graceful = false;
  let notRead = false;
  try {
    for (;;) {
      const r = await it.next();
      if (r.done) {
        // A client reset reaches us as END_STREAM followed a moment later by
        // RST_STREAM (Node's http2 closes that way), so the end of the request
        // side alone does not prove a half-close: give the cancellation a
        // bounded moment to land before returning a held task unconsumed. A held RPC
        // too: taken for a half-close, a reset one would run again on another worker.
        graceful = !(await abortedWithin(signal, slot.attempt || slot.rpc ? RESET_GRACE_MS : 0));
        break;
      }
      await handleFrame(r.value, slot, gateway);
      // Each frame may queue an answer (an ack echoes its token, up to a MiB): a worker that
      // sends and never reads would have the node hold them all.
      if (slot.out.size > MAX_UNREAD_FRAMES) {
        notRead = true;
        throw zdError('ZD_STREAM_NOT_READ', { count: slot.out.size, cap: MAX_UNREAD_FRAMES });
      }
    }
  } catch (err) {
    // A result Redis did not take (out of reach, a Cluster slot mid-migration) is recorded once it
    // answers (gateway/attempt-settling.ts); the worker hears the retryable why, not a clean end of its stream.
    if (err instanceof ZdError) ending.error = err;
    else ending.error = storeUnavailable(err);
    log.debug({ stream: slot.id, err: (err as Error).message }, 'worker stream ended');
  } finally {
    // A stream the node ended over a frame it refuses: the attempt it held fails for that, said (not "reset").
    const lostBecause = ending.error ? `stream ended by the node: ${ending.error.message}` : undefined;
    await gateway.unregister(slot, graceful, lostBecause).catch((err: Error) => log.warn({ err: err.message }, 'unregister failed'));
    // After unregister, which takes back a task frame the worker never read: the rest goes too.
    if (notRead) slot.out.clear();
  }
}

/**
 * Frames a stream may have waiting for its worker to read: a slot has a task, its ack, a
 * cancel and a ping in flight at most, so a worker past this reads nothing (ZD_STREAM_NOT_READ).
 */
const MAX_UNREAD_FRAMES = 64;

/** How long a stream that ended while holding a task waits to learn whether it was reset. */
const RESET_GRACE_MS = 150;

function abortedWithin(signal: AbortSignal, ms: number): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(true);
  if (ms <= 0) return new Promise((resolve) => setImmediate(() => resolve(signal.aborted)));
  return new Promise((resolve) => {
    const done = (v: boolean) => {
      clearTimeout(t);
      signal.removeEventListener('abort', onAbort);
      resolve(v);
    };
    const onAbort = () => done(true);
    const t = setTimeout(() => done(signal.aborted), ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * A frame whose bytes are no WorkerFrame (a client bug, a middlebox) ends the
 * stream with INVALID_ARGUMENT: read as an empty frame it would be ignored, and a
 * result lost that way left its attempt running on a slot the worker thinks free.
 */
function requireDecoded(f: pb.WorkerFrame): void {
  const undecoded = decodeProblem(f, 'frame', 'WorkerFrame protobuf message');
  if (undecoded) throw invalidArgument(undecoded.field, undecoded.reason);
}

/** The string fields of a result, decline or heartbeat, by name, as a lenient read gave them. */
function textFields(f: pb.WorkerFrame): Array<[string, string | null | undefined]> {
  const r = f.step_result ?? f.rpc_result;
  if (r) {
    const kind = f.frame;
    return [[`${kind}.task_token`, r.task_token], [`${kind}.failure.message`, r.failure?.message], [`${kind}.failure.type`, r.failure?.type]];
  }
  if (f.decline) return [['decline.task_token', f.decline.task_token]];
  if (f.heartbeat) return [['heartbeat.task_token', f.heartbeat.task_token]];
  return [];
}

/**
 * A result, decline or heartbeat with a string that is no UTF-8 (a worker that cut its
 * error inside a character): that frame alone is refused, naming the field, and the
 * attempt stays the slot's (REFUSED_INVALID: a valid result is still taken). Ending the
 * stream failed the attempt as worker lost and dropped the worker's own failure.
 * Anything else that does not decode still ends the stream. True when handled.
 */
function refusedForText(f: pb.WorkerFrame, slot: Slot, gateway: Gateway): boolean {
  if (!hasInvalidText(f) || !(f.step_result || f.rpc_result || f.decline || f.heartbeat)) return false;
  if (f.heartbeat) return true; // a heartbeat has no answer: the next one counts
  const fields = textFields(f).filter(([, v]) => (v ?? '').includes('\uFFFD')).map(([name]) => name);
  const token = (f.step_result ?? f.rpc_result ?? f.decline)?.task_token ?? '';
  gateway.refuseInvalid(slot, token, `${fields.length > 0 ? fields.join(', ') : f.frame}: not valid UTF-8 text; nothing was recorded`);
  return true;
}

async function handleFrame(f: pb.WorkerFrame, slot: Slot, gateway: Gateway): Promise<void> {
  if (refusedForText(f, slot, gateway)) return;
  requireDecoded(f);
  gateway.heardFrom(slot);
  switch (f.frame) {
    case 'step_result':
      return gateway.stepResult(slot, f.step_result!);
    case 'decline':
      return gateway.decline(slot, f.decline!);
    case 'heartbeat':
      return gateway.heartbeat(slot, f.heartbeat!);
    case 'rpc_result':
      return gateway.rpcResult(slot, f.rpc_result!);
    case 'register':
      // One Register per stream: a second one would change the slot's tenant or
      // flow types under the attempt it may hold. The stream ends as a reset would.
      throw invalidArgument('register', 'was sent again on a registered stream; a stream registers once, in its first frame');
    case 'pong':
    default:
      // An empty frame, or one of a newer protocol this node does not know: nothing to do.
      return;
  }
}
