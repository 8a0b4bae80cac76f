/**
 * RPC load of the chaos soak (chaos.test.ts): InvokeRpc calls at a bounded
 * rate against random nodes while nodes, workers and Redis are killed, each
 * answered by the worker processes' `echo` handler (rpc-handler.js). Every
 * call's result is recorded and checked against what DESIGN §4, §11.7 and
 * docs/errors.md promise a caller:
 *
 * - an answer carries `echo <input>` for the call's own input, and names the
 *   app worker that ran that very call; a handler's failure names its input;
 * - a refusal is UNAVAILABLE (no slot took it in time, the worker did not
 *   answer within the timeout or went away, the node is draining or its
 *   connection dropped); nothing else, DEADLINE_EXCEEDED included: the node
 *   answers UNAVAILABLE at the caller's timeout, before the Client's own
 *   deadline (unless the node was frozen meanwhile: freezes.ts, or this
 *   process, the caller, stalled inside that margin: caller-stalls.ts; each
 *   such call is counted apart in the summary). Never
 *   NOT_FOUND: it says no connected worker of the flow type has the name
 *   (DESIGN §4), and every worker of the soak's flow type has `echo`; a node
 *   that knows of no worker at all waits for one and answers UNAVAILABLE;
 * - no call takes longer than its timeout plus the Client's margin and a
 *   bounded slack;
 * - no call runs twice (a call that reached a worker and lost it is not run
 *   again elsewhere: docs/operations.md): every call's input is unique, and
 *   the handler tells each run of it, with its worker, before running it
 *   (rpc-handler.js), so a second run on any worker, the same one included,
 *   shows. A worker killed before its message left may hide a run, never add one.
 */
import { RpcFailedError, ZdError, type Client } from '../../src';

export interface RpcLoadOptions {
  clients: Client[];
  /** Indexes of the nodes believed up. */
  up: () => number[];
  random: () => number;
  /** Calls started per second. */
  rate: number;
  /** The loop never runs past this (epoch ms). */
  until: number;
  /** Whether node `i` stopped answering (frozen) between `from` and `to`: its calls may end DEADLINE_EXCEEDED. */
  silent?: (i: number, from: number, to: number) => boolean;
  /** The longest stall of this process, the caller, between `from` and `to` (caller-stalls.ts). */
  callerStalled?: (from: number, to: number) => number;
}

/** The Client gives the server this long past the call's timeout (client.ts RPC_DEADLINE_MARGIN_MS). */
const CLIENT_MARGIN_MS = 1000;
/** A call not settled this long past its timeout plus the Client's margin counts as hung. */
const HANG_SLACK_MS = 3000;
const MAX_IN_FLIGHT = 64;
/** A stall of the caller this long, between the call's timeout and the Client's deadline, excuses a DEADLINE_EXCEEDED. */
const CALLER_STALL_EXCUSE_MS = 200;

type Result = { kind: 'ok'; worker: string } | { kind: 'failed' } | { kind: 'refused'; code: string };

export class RpcLoad {
  readonly violations: string[] = [];
  /** Input → the app worker ids that started it (from the worker processes). */
  private readonly runs = new Map<string, string[]>();
  private readonly results = new Map<string, Result>();
  private readonly counts: Record<string, number> = {};
  private readonly inFlight = new Set<Promise<void>>();
  private running = false;
  private loop: Promise<void> | undefined;
  private seq = 0;

  constructor(private readonly opts: RpcLoadOptions) {}

  /** A worker process's IPC message; true when it was an RPC's. */
  onMessage(m: { rpc?: string; worker?: string }): boolean {
    if (m.rpc === undefined) return false;
    const by = this.runs.get(m.rpc) ?? [];
    by.push(m.worker ?? '?');
    this.runs.set(m.rpc, by);
    if (by.length > 1) this.violations.push(`rpc ${m.rpc} ran ${by.length} times (${by.join(', ')})`);
    return true;
  }

  start(): void {
    this.running = true;
    this.loop = (async () => {
      const gap = 1000 / this.opts.rate;
      let next = Date.now();
      while (this.running && Date.now() < this.opts.until) {
        if (this.inFlight.size < MAX_IN_FLIGHT) {
          const p = this.call().finally(() => this.inFlight.delete(p));
          this.inFlight.add(p);
        }
        next += gap;
        await new Promise((r) => setTimeout(r, Math.max(1, next - Date.now())));
      }
    })();
  }

  /** Stops the loop and waits for the calls in flight, each bounded by its watchdog. */
  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
    await Promise.all([...this.inFlight]);
  }

  /** Checks what only the end can tell: an answer named the worker that ran the call. Call once the workers are quiet. */
  finish(): void {
    for (const [input, r] of this.results) {
      if (r.kind !== 'ok') continue;
      const by = this.runs.get(input);
      if (!by) this.violations.push(`rpc ${input} answered by ${r.worker}, but no worker ran it`);
      else if (!by.includes(r.worker)) this.violations.push(`rpc ${input} answered as by ${r.worker}, but ran on ${by.join(', ')}`);
    }
  }

  summary(): string {
    return `${this.results.size} RPCs ${JSON.stringify(this.counts)}`;
  }

  private count(what: string): void {
    this.counts[what] = (this.counts[what] ?? 0) + 1;
  }

  private async call(): Promise<void> {
    const { clients, up, random } = this.opts;
    const live = up();
    const i = live.length ? live[Math.floor(random() * live.length)]! : Math.floor(random() * clients.length);
    const input = `rpc ${++this.seq} ${Math.floor(random() * 1e9)}`;
    const timeoutMs = 300 + Math.floor(random() * 1700);
    const t0 = Date.now();
    const bound = timeoutMs + CLIENT_MARGIN_MS + HANG_SLACK_MS;
    let watchdog: NodeJS.Timeout | undefined;
    const hung = new Promise<'hung'>((r) => { watchdog = setTimeout(() => r('hung'), bound); });
    const call = clients[i]!.invokeRpc({ tenant: 'acme', flowId: `rpc-f${this.seq % 50}`, flowType: 'order', rpcName: 'echo', input, timeoutMs })
      .then((res) => ({ res }), (err: unknown) => ({ err }));
    const got = await Promise.race([call, hung]);
    clearTimeout(watchdog);
    const ms = Date.now() - t0;
    const where = `rpc ${input} (node ${i}, timeout ${timeoutMs} ms, ${ms} ms)`;
    if (got === 'hung') {
      this.count('hung');
      this.violations.push(`${where}: no answer within ${bound} ms`);
      return;
    }
    if ('res' in got) {
      this.count('OK');
      this.results.set(input, { kind: 'ok', worker: got.res.appWorkerId });
      const output = got.res.output.toString();
      if (output !== `echo ${input}`) this.violations.push(`${where}: answered ${JSON.stringify(output)}`);
      return;
    }
    const err = got.err;
    if (err instanceof RpcFailedError) {
      this.count('handler failed');
      this.results.set(input, { kind: 'failed' });
      if (err.message !== `refused ${input}`) this.violations.push(`${where}: failed with another call's failure: ${err.message}`);
      return;
    }
    const status = err instanceof ZdError ? err.name : (err as Error)?.name ?? 'non-error';
    const code = err instanceof ZdError ? `${status}${err.code ? ` ${err.code}` : ''}` : status;
    this.count(code);
    this.results.set(input, { kind: 'refused', code });
    const message = (err as Error)?.message ?? String(err);
    if (status === 'ZdUnavailableError') return;
    if (status === 'ZdDeadlineExceededError') {
      if (this.opts.silent?.(i, t0, Date.now())) return;
      // The node's answer came by the call's timeout, but this process did not run to read it
      // before the Client's deadline fired (caller-stalls.ts).
      const stalled = this.opts.callerStalled?.(t0 + timeoutMs, t0 + timeoutMs + CLIENT_MARGIN_MS) ?? 0;
      if (stalled >= CALLER_STALL_EXCUSE_MS) {
        this.count('DEADLINE_EXCEEDED excused: the caller stalled');
        return;
      }
    }
    this.violations.push(`${where}: refused ${code}: ${message}`);
  }
}
