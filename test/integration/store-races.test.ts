/**
 * Every transition of a task is one script (DESIGN §2), and any two of them may
 * reach Redis in either order for the same task: a late result after the attempt
 * timed out and was retried, a cancel racing a completion, a lock expiring under
 * a Complete, two nodes both taking themselves for a partition's owner. This
 * drives tasks through seeded random sequences of every store call — enqueue and
 * EnqueueSteps batches (bound to a slot or not, repeats included), start (alone
 * and batched), complete (batched, frames sent twice), fail, release, heartbeat,
 * an owner's due and node-lost fails, the flow deadline timeout, CancelFlow, the
 * fetch surface's lock, complete (and one that stops between its outcome and its
 * delete), fail, extend and unlock, the operators' terminal retry and abandon,
 * queue pruning, lease takeovers, node restarts, both task layouts — against a
 * real redis-server, with a fake clock, and holds each answer and the whole of
 * Redis after every call to a reference model of the task lifecycle:
 *
 * - an attempt is held by one slot or one fetch lock at a time; a call by anyone
 *   else is refused and changes nothing (DESIGN §11.2, §11.4), unless it is the
 *   holder's own call run again, which answers as the first did;
 * - every task ends once, with one outcome in its partition's stream and a done
 *   record that agree (§11.3), and an enqueued task is never lost (§11.1);
 * - queues, inflight, terminal, deadlines, flow sets and sticky entries hold
 *   exactly what the tasks' states say: no task in two places, no orphan entry,
 *   no lock left on a task that is not locked, no key nothing accounts for.
 *
 * ZD_RACE_SEED=<n> reruns one seed; ZD_RACE_SEEDS and ZD_RACE_STEPS scale the run.
 * A failure names its seed and the calls that led to it.
 */
import type { Redis } from 'ioredis';
import { FetchStore } from '../../src/store/fetch-store';
import { Keys } from '../../src/store/keys';
import { createRedis, type RedisClient } from '../../src/store/redis';
import {
  TaskStore, type AttemptRef, type EnqueueStart, type Enqueued, type FailCondition, type FailureInfo, type NewTask, type SlotIdentity,
} from '../../src/store/task-store';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { prng } from '../helpers/prng';

const redis = useEmbeddedRedis();

const ONE_SEED = process.env.ZD_RACE_SEED;
const SEEDS = ONE_SEED !== undefined ? [Number(ONE_SEED)] :
  Array.from({ length: Number(process.env.ZD_RACE_SEEDS ?? 10) }, (_, i) => 0x7ace + i * 7919);
const STEPS = Number(process.env.ZD_RACE_STEPS ?? 400);

/** The seeded source, with a coin and a range. */
function rng(seed: number) {
  const { next, int, pick } = prng(seed);
  return {
    next, int, pick,
    chance: (p: number): boolean => next() < p,
    between: (lo: number, hi: number): number => lo + int(hi - lo + 1),
  };
}
type Rng = ReturnType<typeof rng>;

const NO_DEADLINE = 9007199254740991;
const TENANT = 'acme';
const QUEUES = [`${TENANT}:order:charge`, `${TENANT}:order:ship`];
const PARTITIONS = [3, 5];
const NODES = ['n1', 'n2'];
const FETCH_WORKERS = ['f1', 'f2'];
const RETENTION_MS = 600_000;

type State = 'new' | 'queued' | 'running' | 'locked' | 'terminal' | 'ended';

interface Run {
  /** The task layout its start wrote (src/store/layout.ts). */
  layout: number;
  nonce: string;
  slot: SlotIdentity;
  startedAt: number;
  deadlineAt: number;
}

interface Outcome {
  status: string;
  /** The stream entry id; undefined until the next check reads it (an end whose call does not name it). */
  id?: string;
  /** The done record's fetchIdem: a fetch idempotency key, a stream attempt's start mark, or ''. */
  mark: string;
  attempt: number;
  worker: string;
}

/** The model of one task: what Redis must hold for it. */
interface MTask {
  spec: NewTask;
  state: State;
  attempt: number;
  readyAt: number;
  run?: Run;
  lock?: { worker: string; until: number; ms: number };
  maxExpiries: number;
  lockExpiries: number;
  fetchRetries?: number;
  backNonce?: string;
  outcome?: Outcome;
  /**
   * An ended task whose hash is left, locked: a fetch Complete stopped between its
   * outcome and its delete (FetchStoreFaults.completeAfterOutcome). Its lock lapses
   * and it is offered again; the scripts that find it delete it.
   */
  leftover?: { worker: string; until: number; ms: number };
}

/** A stream slot's hold of an attempt, kept after it ended: its late calls race everything else. */
interface Ref {
  task: MTask;
  attempt: number;
  nonce: string;
  slot: SlotIdentity;
}

/** A lease holder's token, current or stale. */
interface Lease {
  token: string;
}

const startMark = (nonce: string): string => `\x01${nonce}`;

/**
 * One call: returns every key under the prefix with its contents. Done records
 * and stream entries are split at their \xff separators here, so that the reply is
 * text (ioredis would decode the separator as UTF-8).
 */
const DUMP = `
local out = {}
for _, k in ipairs(redis.call('KEYS', ARGV[1] .. '*')) do
  local t = redis.call('TYPE', k).ok
  local v
  if t == 'hash' then v = redis.call('HGETALL', k)
  elseif t == 'zset' then v = redis.call('ZRANGE', k, 0, -1, 'WITHSCORES')
  elseif t == 'set' then v = redis.call('SMEMBERS', k)
  elseif t == 'string' then
    local s = redis.call('GET', k)
    v = {}
    if string.find(s, '\\255') then for f in string.gmatch(s, '([^\\255]*)\\255') do v[#v + 1] = f end
    else v[1] = s end
  elseif t == 'stream' then
    v = {}
    for _, e in ipairs(redis.call('XRANGE', k, '-', '+')) do
      local f, o = e[2], nil
      local id = ''
      for i = 1, #f, 2 do
        if f[i] == 'taskId' then id = f[i + 1] elseif f[i] == 'o' then o = f[i + 1] end
      end
      v[#v + 1] = e[1]
      v[#v + 1] = id
      v[#v + 1] = string.match(o or '', '^([^\\255]*)\\255')
      local parts = {}
      for p in string.gmatch(o or '', '([^\\255]*)\\255') do parts[#parts + 1] = p end
      v[#v + 1] = parts[7] or ''
      v[#v + 1] = parts[8] or ''
    end
  end
  out[#out + 1] = {k, t, v}
end
return out`;

type Dump = Map<string, { type: string; v: string[] }>;

class Failure extends Error {}

/** One seed's run: the model, the store calls, and the checks after each. */
class SeedRun {
  private readonly r: Rng;
  private now = 1_000_000;
  private readonly tasks: MTask[] = [];
  private readonly refs: Ref[] = [];
  private readonly sticky = new Map<string, string>();
  private readonly leases = new Map<number, { current: Lease; stale: Lease[] }>();
  private readonly trace: string[] = [];
  private nonces = 0;
  private flows = 0;
  private readonly boots = new Map<string, string>(NODES.map((n) => [n, `${n}-boot0`]));
  private readonly store: TaskStore;
  private readonly fetch: FetchStore;
  /** The task layout starts write: a cluster mid-upgrade switches between the two. */
  private layout: number;

  constructor(
    readonly seed: number,
    private readonly client: RedisClient,
    private readonly keys: Keys,
  ) {
    this.r = rng(seed);
    this.layout = this.r.pick([1, 2]);
    this.store = new TaskStore(client, keys, RETENTION_MS, 60_000, undefined, () => this.layout);
    this.fetch = new FetchStore(client, keys, RETENTION_MS);
  }

  // ---- set-up ---------------------------------------------------------------

  /** A few flows of one to four Steps each, in random partitions and queues, with random timeouts and policies. */
  private makeTasks(flows: number): void {
    const r = this.r;
    for (let f = 0; f < flows; f++) {
      const partition = r.pick(PARTITIONS);
      const flowId = `flow-${this.flows++}`;
      const deadline = r.chance(0.5) ? 0 : this.now + r.between(300, 5000);
      const count = r.between(1, 4);
      for (let i = 0; i < count; i++) {
        const n = this.tasks.length + 1;
        const queue = r.pick(QUEUES);
        const spec: NewTask = {
          partition, taskId: `${partition}-${n.toString(16).padStart(24, '0')}`, queue,
          tenant: TENANT, flowId, flowType: 'order', stepType: queue.split(':')[2]!, stepExecutionId: `step-${n}`,
          input: Buffer.from(`in-${n}`), readyAt: 0, flowDeadline: deadline, maxAttempts: r.between(1, 4),
          initialInterval: r.between(1, 200), backoffCoefficient: 2, maxInterval: 400,
          nonRetryable: r.chance(0.3) ? ['fatal'] : [], methodTimeout: r.chance(0.5) ? 0 : r.between(50, 1500),
          heartbeatTimeout: r.chance(0.5) ? 0 : r.between(50, 800), stickyWorkerId: r.chance(0.1) ? 'w1' : '',
        };
        this.tasks.push({ spec, state: 'new', attempt: 0, readyAt: 0, maxExpiries: 0, lockExpiries: 0 });
      }
    }
  }

  private async takeLease(p: number, node: string): Promise<void> {
    await this.client.del(this.keys.lease(p));
    const reply = (await this.client.zdAcquireLease(this.keys.lease(p), this.keys.epoch(p), node, 600_000)) as [number, string];
    if (Number(reply[0]) !== 1) throw new Failure(`lease of ${p} not taken: ${JSON.stringify(reply)}`);
    const token = `${node}:${reply[1]}`;
    const l = this.leases.get(p);
    if (l) {
      l.stale.push(l.current);
      l.current = { token };
    } else this.leases.set(p, { current: { token }, stale: [] });
  }

  // ---- helpers over the model ----------------------------------------------

  private fail(msg: string): never {
    throw new Failure(msg);
  }

  private expect(what: string, got: unknown, want: unknown): void {
    const g = JSON.stringify(got);
    const w = JSON.stringify(want);
    if (g !== w) this.fail(`${what}: got ${g}, want ${w}`);
  }

  private live(t: MTask): boolean {
    return t.state !== 'new' && t.state !== 'ended';
  }

  /** Whether the task has an entry in its queue: queued, locked, or a leftover. */
  private queued(t: MTask): boolean {
    return t.state === 'queued' || t.state === 'locked' || t.leftover !== undefined;
  }

  /** Its queue entry's score. */
  private score(t: MTask): number {
    return t.state === 'queued' ? t.readyAt : (t.lock ?? t.leftover)!.until;
  }

  private late(t: MTask): boolean {
    return t.spec.flowDeadline > 0 && t.spec.flowDeadline <= this.now;
  }

  private nonce(): string {
    this.nonces += 1;
    return `nonce-${this.nonces}`;
  }

  private slot(): SlotIdentity {
    const node = this.r.pick(NODES);
    const app = this.r.pick(['w1', 'w2', 'w3']);
    return { appWorkerId: app, streamId: `${app}-s${this.r.int(3)}`, nodeId: node, bootId: this.boots.get(node)! };
  }

  private deadlineAt(t: MTask, at: number): number {
    const { methodTimeout: mt, heartbeatTimeout: ht } = t.spec;
    if (mt <= 0 && ht <= 0) return NO_DEADLINE;
    let d = Infinity;
    if (mt > 0) d = at + mt;
    if (ht > 0) d = Math.min(d, at + ht);
    return d;
  }

  private end(t: MTask, status: string, mark: string, id?: string): void {
    const worker = t.state === 'running' ? t.run!.slot.appWorkerId : t.state === 'locked' ? t.lock!.worker : '';
    t.outcome = { status, id, mark, attempt: t.attempt, worker };
    t.state = 'ended';
    t.run = undefined;
    t.lock = undefined;
  }

  private toQueued(t: MTask, readyAt: number): void {
    t.state = 'queued';
    t.readyAt = readyAt;
    t.run = undefined;
    t.lock = undefined;
  }

  private makeTerminal(t: MTask): void {
    t.state = 'terminal';
    t.lock = undefined;
  }

  private refOf(a: Ref): AttemptRef {
    return { partition: a.task.spec.partition, taskId: a.task.spec.taskId, attempt: a.attempt, nonce: a.nonce };
  }

  private leaseToken(p: number): string {
    const l = this.leases.get(p)!;
    if (l.stale.length > 0 && this.r.chance(0.25)) return this.r.pick(l.stale).token;
    return l.current.token;
  }

  /** A task: live ones mostly, started or locked ones more often (that is where the races are), now and then one that ended or never was. */
  private pickTask(): MTask {
    const r = this.r;
    const busy = this.tasks.filter((t) => t.state === 'running' || t.state === 'locked' || t.leftover);
    if (busy.length > 0 && r.chance(0.4)) return r.pick(busy);
    const live = this.tasks.filter((t) => this.live(t));
    if (live.length > 0 && r.chance(0.8)) return r.pick(live);
    return r.pick(this.tasks);
  }

  /** A stream ref: the task's current holder mostly, else any earlier one (a late call). */
  private pickRef(): Ref | undefined {
    if (this.refs.length === 0) return undefined;
    const holders = this.refs.filter((a) => a.task.state === 'running' && a.task.run!.nonce === a.nonce);
    if (holders.length > 0 && this.r.chance(0.6)) return this.r.pick(holders);
    return this.r.pick(this.refs);
  }

  private holds(a: Ref): boolean {
    return a.task.state === 'running' && a.task.run!.nonce === a.nonce && a.task.attempt === a.attempt;
  }

  // ---- the operations --------------------------------------------------------

  /** An enqueue, or a batch of them (EnqueueSteps) in one call, each bound to an idle slot or not, repeats included. */
  private async opEnqueue(): Promise<void> {
    const r = this.r;
    const fresh = this.tasks.filter((t) => t.state === 'new');
    const n = r.chance(0.3) ? r.between(2, 4) : 1;
    const items = Array.from({ length: n }, () => {
      const t = fresh.length > 0 && r.chance(0.85) ? r.pick(fresh) : r.pick(this.tasks);
      const readyAt = r.chance(0.5) ? 0 : this.now + r.between(0, 300);
      const bound = r.chance(0.4);
      // a re-sent bound enqueue: the same nonce as the start it made
      const resend = bound && t.state === 'running' && r.chance(0.5) ? t.run! : undefined;
      const start = bound ? (resend ? { slot: resend.slot, nonce: resend.nonce } : { slot: this.slot(), nonce: this.nonce() }) : undefined;
      return { t, spec: { ...t.spec, readyAt }, start };
    });
    this.trace.push(`enqueue ${items.map((i) => `${i.t.spec.taskId} readyAt=${i.spec.readyAt}${i.start ? ` bound ${i.start.slot.appWorkerId}/${i.start.nonce}` : ''}`).join(', ')}`);
    const got = n === 1 && !items[0]!.start
      ? [await this.store.enqueue(items[0]!.spec, this.now)]
      : await this.store.enqueueMany(items.map((i) => i.spec), this.now, items.map((i) => i.start));
    items.forEach((item, i) => this.modelEnqueue(item.t, item.spec.readyAt, item.start, got[i]!));
  }

  private modelEnqueue(t: MTask, readyAt: number, start: EnqueueStart | undefined, got: Enqueued): void {
    const flowSticky = this.sticky.get(`${t.spec.partition}:${t.spec.flowId}`) ?? '';
    if (t.leftover) return this.expect('enqueue of a leftover', got, { result: 'exists', rememberedSticky: '' });
    if (t.state === 'ended') return this.expect('enqueue of an ended task', got, { result: 'ended', rememberedSticky: '' });
    if (t.state !== 'new') {
      if (t.state === 'queued') {
        return this.expect('enqueue of a queued task', got,
          { result: 'exists', rememberedSticky: '', queued: { queue: t.spec.queue, readyAt: t.readyAt } });
      }
      if (start && t.state === 'running' && t.run!.nonce === start.nonce) {
        return this.expect('a bound enqueue sent again', got,
          { result: 'created', rememberedSticky: flowSticky, startedDeadlineAt: t.run!.deadlineAt });
      }
      return this.expect(`enqueue of a ${t.state} task`, got, { result: 'exists', rememberedSticky: '' });
    }
    t.attempt = 1;
    t.readyAt = Math.max(readyAt, this.now);
    if (start && !this.late(t) && (flowSticky === '' || flowSticky === start.slot.appWorkerId)) {
      t.state = 'running';
      t.run = { layout: this.layout, nonce: start.nonce, slot: start.slot, startedAt: this.now, deadlineAt: this.deadlineAt(t, this.now) };
      this.refs.push({ task: t, attempt: 1, nonce: start.nonce, slot: start.slot });
      return this.expect('a bound enqueue', got, { result: 'created', rememberedSticky: flowSticky, startedDeadlineAt: t.run.deadlineAt });
    }
    t.state = 'queued';
    this.expect('an enqueue', got, { result: 'created', rememberedSticky: flowSticky });
  }

  /** What a start of `t` must answer, applied to the model: 'ok', or the refusal's kind. */
  private modelStart(t: MTask, attempt: number, slot: SlotIdentity, nonce: string): string {
    if (t.leftover) {
      // a leftover is never started; once its lock has lapsed, the start deletes it
      if (t.leftover.until <= this.now && (attempt === 0 || attempt === t.attempt) && !this.late(t)) t.leftover = undefined;
      return 'stale';
    }
    if (!this.live(t)) return 'not-found';
    const fromLock = t.state === 'locked' && t.lock!.until <= this.now;
    if ((t.state !== 'queued' && !fromLock) || (attempt !== 0 && t.attempt !== attempt)) {
      if (t.state === 'running' && t.run!.nonce === nonce) return 'again';
      return 'stale';
    }
    if (!fromLock && t.readyAt > this.now) return 'not-ready';
    if (this.late(t)) return 'stale';
    if (fromLock) {
      t.lockExpiries += 1;
      if (t.maxExpiries > 0 && t.lockExpiries > t.maxExpiries) {
        this.makeTerminal(t);
        return 'stale';
      }
      t.lock = undefined;
    }
    t.state = 'running';
    t.run = { layout: this.layout, nonce, slot, startedAt: this.now, deadlineAt: this.deadlineAt(t, this.now) };
    this.refs.push({ task: t, attempt: t.attempt, nonce, slot });
    return 'ok';
  }

  private async opStart(): Promise<void> {
    const r = this.r;
    // several starts of one node in one turn: one startTasks call, run in call order
    const n = r.chance(0.3) ? r.between(2, 4) : 1;
    const node = r.pick(NODES);
    const calls = Array.from({ length: n }, () => {
      const ready = this.tasks.filter((x) => (x.state === 'queued' && x.readyAt <= this.now) || (x.state === 'locked' && x.lock!.until <= this.now));
      const t = ready.length > 0 && r.chance(0.5) ? r.pick(ready) : this.pickTask();
      let slot = { ...this.slot(), nodeId: node, bootId: this.boots.get(node)! };
      let nonce = this.nonce();
      if (t.state === 'running' && t.run!.slot.nodeId === node && r.chance(0.2)) ({ slot, nonce } = t.run!); // sent again
      const attempt = r.chance(0.5) ? 0 : r.chance(0.8) ? t.attempt : Math.max(1, t.attempt - 1);
      return { t, slot, nonce, attempt };
    });
    this.trace.push(`start ${calls.map((c) => `${c.t.spec.taskId}#${c.attempt}/${c.nonce}`).join(' ')}`);
    const got = await Promise.all(calls.map((c) =>
      this.store.start(c.t.spec.partition, c.t.spec.taskId, c.attempt, c.slot, c.nonce, this.now)));
    calls.forEach((c, i) => {
      const before = { attempt: c.t.attempt, run: c.t.run };
      const want = this.modelStart(c.t, c.attempt, c.slot, c.nonce);
      const g = got[i]!;
      if (want === 'ok' || want === 'again') {
        if ('kind' in g) this.fail(`start of ${c.t.spec.taskId}: refused ${JSON.stringify(g)}, want a start`);
        const run = want === 'again' ? before.run! : c.t.run!;
        this.expect(`start of ${c.t.spec.taskId}`, [g.attempt, g.nonce, g.deadlineAt, g.input.toString()],
          [c.t.attempt, run.nonce, run.deadlineAt, c.t.spec.input.toString()]);
      } else {
        if (!('kind' in g)) this.fail(`start of ${c.t.spec.taskId} (${want} in the model): started attempt ${g.attempt}`);
        this.expect(`start of ${c.t.spec.taskId}`, g.kind, want);
      }
    });
  }

  private async opComplete(): Promise<void> {
    const r = this.r;
    const stopping = r.chance(0.15);
    const n = r.chance(0.3) ? r.between(2, 4) : 1;
    const picked: Ref[] = [];
    for (let i = 0; i < n; i++) {
      // the same result twice in one turn (a frame sent again) is a call of its own
      const a = this.pickRef();
      if (a) picked.push(a);
    }
    if (picked.length === 0) return;
    this.trace.push(`complete${stopping ? ' (stopping)' : ''} ${picked.map((a) => `${a.task.spec.taskId}#${a.attempt}/${a.nonce}`).join(' ')}`);
    const got = await Promise.all(picked.map((a) => this.store.complete(this.refOf(a), Buffer.from(`out-${a.nonce}`), this.now, stopping)));
    picked.forEach((a, i) => {
      const t = a.task;
      const g = got[i]!;
      if (this.holds(a)) {
        const worker = a.slot.appWorkerId;
        this.end(t, 'COMPLETED', startMark(a.nonce));
        const key = `${t.spec.partition}:${t.spec.flowId}`;
        if (!stopping) this.sticky.set(key, worker);
        else if (this.sticky.get(key) === worker) this.sticky.delete(key);
        if (g.kind !== 'completed') this.fail(`complete by the holder of ${t.spec.taskId}: ${JSON.stringify(g)}`);
        t.outcome!.id = g.outcomeId;
        return;
      }
      if (t.leftover) return this.expect(`complete of the leftover ${t.spec.taskId}`, g, { kind: 'stale' });
      if (t.state === 'ended') {
        if (t.outcome!.status === 'COMPLETED' && t.outcome!.mark === startMark(a.nonce)) {
          return this.expect(`complete of ${t.spec.taskId} sent again`, g, { kind: 'completed', outcomeId: t.outcome!.id });
        }
        return this.expect(`late complete of ${t.spec.taskId}`, g, { kind: 'ended', status: t.outcome!.status });
      }
      this.expect(`complete of ${t.spec.taskId} by ${a.nonce}, not its holder`, g, { kind: 'stale' });
    });
  }

  /** A stream fail, a gateway's (no lease) or an owner's (lease token and reason). */
  private async opFail(owner: 'due' | 'lost' | undefined): Promise<void> {
    const r = this.r;
    const a = this.pickRef();
    if (!a) return;
    const t = a.task;
    const p = t.spec.partition;
    const f: FailureInfo = {
      message: `failed ${a.nonce}`, type: r.chance(0.2) ? 'fatal' : 'boom', nonRetryable: r.chance(0.15),
      retryAfterMs: r.chance(0.3) ? r.between(1, 300) : 0,
    };
    let token = '';
    let cond: FailCondition | undefined;
    if (owner) {
      token = this.leaseToken(p);
      if (owner === 'due') cond = { kind: 'due' };
      else {
        const node = r.chance(0.7) ? a.slot.nodeId : r.pick(NODES);
        cond = { kind: 'node-lost', node, boot: r.chance(0.8) ? a.slot.bootId : this.boots.get(node)! };
      }
    }
    this.trace.push(`fail${owner ? ` owner ${JSON.stringify(cond)} token ${token}` : ''} ${t.spec.taskId}#${a.attempt}/${a.nonce} ${JSON.stringify(f)}`);
    const g = await this.store.fail(this.refOf(a), f, this.now, token, cond);
    if (owner && token !== this.leases.get(p)!.current.token) return this.expect('an owner fail with a stale lease', g, { kind: 'lease-moved' });
    const mark = startMark(a.nonce) + (owner ? '\x02' : '');
    if (t.leftover) return this.expect(`fail of the leftover ${t.spec.taskId}`, g, { kind: 'stale' });
    if (t.state === 'ended') {
      const o = t.outcome!;
      if (o.mark === mark && (o.status === 'FAILED' || o.status === 'TIMED_OUT')) {
        return this.expect(`fail of ${t.spec.taskId} sent again`, g, { kind: 'terminal', outcomeId: o.id, status: o.status });
      }
      return this.expect(`late fail of ${t.spec.taskId}`, g, { kind: 'ended', status: o.status });
    }
    if (!this.holds(a)) {
      if (t.state === 'queued' && t.backNonce === mark && t.attempt === a.attempt + 1) {
        return this.expect(`fail of ${t.spec.taskId} sent again`, g,
          { kind: 'retry', readyAt: t.readyAt, attempt: t.attempt, flowDeadline: t.spec.flowDeadline, sticky: this.retrySticky(t) });
      }
      return this.expect(`fail of ${t.spec.taskId} by ${a.nonce}, not its holder`, g, { kind: 'stale' });
    }
    if (cond?.kind === 'due' && t.run!.deadlineAt > this.now) return this.expect('an owner fail not due', g, { kind: 'not-due' });
    if (cond?.kind === 'node-lost' && (cond.node !== t.run!.slot.nodeId || cond.boot !== t.run!.slot.bootId)) {
      return this.expect('an owner fail of an attempt on a live node', g, { kind: 'not-due' });
    }
    const s = t.spec;
    const terminal = f.nonRetryable || t.attempt >= s.maxAttempts || (f.type !== '' && s.nonRetryable.includes(f.type));
    if (terminal) {
      this.end(t, 'FAILED', mark);
      if (g.kind !== 'terminal' || g.status !== 'FAILED') this.fail(`terminal fail of ${s.taskId}: ${JSON.stringify(g)}`);
      t.outcome!.id = g.outcomeId;
      return;
    }
    const backoff = f.retryAfterMs > 0 ? f.retryAfterMs
      : Math.min(s.maxInterval, s.initialInterval * s.backoffCoefficient ** (t.attempt - 1));
    const readyAt = this.now + Math.floor(backoff);
    if (s.flowDeadline > 0 && readyAt >= s.flowDeadline) {
      this.end(t, 'TIMED_OUT', mark);
      if (g.kind !== 'terminal' || g.status !== 'TIMED_OUT') this.fail(`fail past the flow deadline of ${s.taskId}: ${JSON.stringify(g)}`);
      t.outcome!.id = g.outcomeId;
      return;
    }
    this.toQueued(t, readyAt);
    t.attempt += 1;
    t.backNonce = mark;
    this.expect(`retry of ${s.taskId}`, g, { kind: 'retry', readyAt, attempt: t.attempt, flowDeadline: s.flowDeadline, sticky: this.retrySticky(t) });
  }

  private retrySticky(t: MTask): string {
    return t.spec.stickyWorkerId || (this.sticky.get(`${t.spec.partition}:${t.spec.flowId}`) ?? '');
  }

  private async opRelease(): Promise<void> {
    const a = this.pickRef();
    if (!a) return;
    const t = a.task;
    this.trace.push(`release ${t.spec.taskId}#${a.attempt}/${a.nonce}`);
    const g = await this.store.release(this.refOf(a));
    const mark = startMark(a.nonce);
    if (t.leftover) return this.expect(`release of the leftover ${t.spec.taskId}`, g, { kind: 'stale' });
    if (t.state === 'ended') return this.expect(`late release of ${t.spec.taskId}`, g, { kind: 'ended', status: t.outcome!.status });
    if (this.holds(a)) {
      this.toQueued(t, t.readyAt);
      t.backNonce = mark;
      return this.expect(`release of ${t.spec.taskId}`, g, { kind: 'released', readyAt: t.readyAt, flowDeadline: t.spec.flowDeadline });
    }
    if (t.state === 'queued' && t.backNonce === mark && t.attempt === a.attempt) {
      return this.expect(`release of ${t.spec.taskId} sent again`, g, { kind: 'released', readyAt: t.readyAt, flowDeadline: t.spec.flowDeadline });
    }
    this.expect(`release of ${t.spec.taskId} by ${a.nonce}, not its holder`, g, { kind: 'stale' });
  }

  private async opHeartbeat(): Promise<void> {
    const a = this.pickRef();
    if (!a) return;
    const t = a.task;
    this.trace.push(`heartbeat ${t.spec.taskId}#${a.attempt}/${a.nonce}`);
    const g = await this.store.heartbeat(this.refOf(a), this.now);
    if (t.leftover) return this.expect(`heartbeat of the leftover ${t.spec.taskId}`, g, { kind: 'stale' });
    if (t.state === 'ended') return this.expect(`late heartbeat of ${t.spec.taskId}`, g, { kind: 'ended', status: t.outcome!.status });
    if (!this.holds(a)) return this.expect(`heartbeat of ${t.spec.taskId} by ${a.nonce}, not its holder`, g, { kind: 'stale' });
    const { methodTimeout: mt, heartbeatTimeout: ht } = t.spec;
    let d = mt > 0 ? t.run!.startedAt + mt : NO_DEADLINE;
    if (ht > 0) d = Math.min(d, this.now + ht);
    t.run!.deadlineAt = d;
    // the reply is Lua's tostring, 14 digits: "never" comes back rounded, which reads the same to the owner's timers
    this.expect(`heartbeat of ${t.spec.taskId}`, g, { kind: 'extended', deadlineAt: Number(d.toPrecision(14)) });
  }

  private async opTimeout(): Promise<void> {
    const t = this.pickTask();
    const p = t.spec.partition;
    const token = this.leaseToken(p);
    this.trace.push(`timeout ${t.spec.taskId} token ${token}`);
    const g = await this.store.timeout(p, t.spec.taskId, this.now, token);
    if (token !== this.leases.get(p)!.current.token) return this.expect('a timeout with a stale lease', g, 'lease-moved');
    const d = t.spec.flowDeadline;
    if (t.leftover) {
      if (d <= 0 || d > this.now) return this.expect(`timeout of the leftover ${t.spec.taskId}`, g, 'not-due');
      t.leftover = undefined;
      return this.expect(`timeout of the leftover ${t.spec.taskId}`, g, 'gone');
    }
    if (!this.live(t)) return this.expect(`timeout of ${t.spec.taskId} (${t.state})`, g, 'gone');
    if (d <= 0 || d > this.now || t.state === 'running') return this.expect(`timeout of ${t.spec.taskId} (${t.state})`, g, 'not-due');
    this.end(t, 'TIMED_OUT', '');
    this.expect(`timeout of ${t.spec.taskId}`, g, 'timed-out');
  }

  private async opCancel(): Promise<void> {
    const t = this.pickTask();
    const { partition: p, flowId } = t.spec;
    this.trace.push(`cancel ${p}/${flowId}`);
    const g = await this.store.cancelFlow(p, TENANT, flowId, 'by test', this.now);
    const queued: string[] = [];
    const running: string[] = [];
    for (const x of this.tasks) {
      if (x.spec.partition !== p || x.spec.flowId !== flowId) continue;
      x.leftover = undefined; // deleted, not cancelled: it has its outcome
      if (!this.live(x)) continue;
      if (x.state === 'running') running.push(`${x.spec.taskId}#${x.attempt}/${x.run!.nonce}@${x.run!.slot.nodeId}/${x.run!.slot.streamId}`);
      else queued.push(x.spec.taskId);
      this.end(x, 'CANCELLED', '');
    }
    this.expect(`cancel of ${flowId}: queued`, [...g.queued].sort(), queued.sort());
    this.expect(`cancel of ${flowId}: running`,
      g.running.map((x) => `${x.taskId}#${x.attempt}/${x.nonce}@${x.nodeId}/${x.streamId}`).sort(), running.sort());
  }

  private async opLock(): Promise<void> {
    const r = this.r;
    const p = r.pick(PARTITIONS);
    const queues = r.chance(0.5) ? [...QUEUES] : [r.pick(QUEUES)];
    if (queues.length === 2 && r.chance(0.5)) queues.reverse();
    const worker = r.pick(FETCH_WORKERS);
    const lockMs = r.between(50, 600);
    const max = r.between(1, 4);
    const maxExpiries = r.between(0, 3);
    this.trace.push(`lock ${p} ${queues.join(',')} by ${worker} for ${lockMs} max ${max} maxExpiries ${maxExpiries}`);
    const g = await this.fetch.lock(p, queues, worker, lockMs, max, maxExpiries, this.now);
    // the model: each queue in turn, its due entries by score then id
    let left = max;
    const claimed: string[] = [];
    const terminal: string[] = [];
    const ended: string[] = [];
    for (const queue of queues) {
      const due = this.tasks
        .filter((t) => t.spec.partition === p && t.spec.queue === queue && this.queued(t))
        .map((t) => ({ t, score: this.score(t) }))
        .filter((e) => e.score <= this.now)
        .sort((x, y) => x.score - y.score || (x.t.spec.taskId < y.t.spec.taskId ? -1 : 1));
      for (const { t } of due) {
        if (left <= 0) break;
        if (this.late(t)) continue;
        if (t.leftover) {
          t.lockExpiries += 1;
          if (t.maxExpiries > 0 && t.lockExpiries > t.maxExpiries) {
            t.leftover = undefined;
            ended.push(t.spec.taskId);
            continue;
          }
          // offered again: its outcome is there, and its worker's calls will say so
          t.leftover = { worker, until: this.now + lockMs, ms: lockMs };
          t.maxExpiries = maxExpiries;
          claimed.push(`${t.spec.taskId}#${t.attempt}`);
          left -= 1;
          continue;
        }
        if (t.state === 'locked') {
          t.lockExpiries += 1;
          if (t.maxExpiries > 0 && t.lockExpiries > t.maxExpiries) {
            this.makeTerminal(t);
            terminal.push(t.spec.taskId);
            continue;
          }
        }
        t.state = 'locked';
        t.lock = { worker, until: this.now + lockMs, ms: lockMs };
        t.maxExpiries = maxExpiries;
        claimed.push(`${t.spec.taskId}#${t.attempt}`);
        left -= 1;
      }
    }
    this.expect(`lock in ${p}: claimed`, g.tasks.map((c) => `${c.taskId}#${c.attempt}`), claimed);
    this.expect(`lock in ${p}: terminal`, g.terminal.map((c) => c.taskId), terminal);
    this.expect(`lock in ${p}: ended`, g.ended.map((c) => c.taskId), ended);
    for (const c of g.tasks) {
      const t = this.tasks.find((x) => x.spec.taskId === c.taskId)!;
      this.expect(`claim of ${c.taskId}`, [c.lockUntil, c.input.toString(), c.retries],
        [(t.lock ?? t.leftover)!.until, t.spec.input.toString(), t.fetchRetries ?? 0]);
    }
    // nextDue: after now, nothing fetchable is left before it (src/gateway/fetch-hints.ts relies on it)
    if (g.nextDue > this.now) {
      for (const t of this.tasks) {
        if (t.spec.partition !== p || !queues.includes(t.spec.queue) || !this.queued(t)) continue;
        const score = this.score(t);
        if (score <= this.now && !this.late(t)) this.fail(`lock in ${p}: nextDue ${g.nextDue} after now, but ${t.spec.taskId} is due at ${score}`);
        if (score > this.now && score < g.nextDue) this.fail(`lock in ${p}: nextDue ${g.nextDue}, but ${t.spec.taskId} comes due at ${score}`);
      }
    }
  }

  /** The fetch surface's verdict for `worker` on `t`: 'ok' or the verdict (store/lua/includes/verdict.lua). */
  private verdict(t: MTask, worker: string): string {
    if (t.leftover) {
      // the lock holder's call finishes the delete; every call hears the task has ended
      if (t.leftover.until > this.now && t.leftover.worker === worker) t.leftover = undefined;
      return 'terminal';
    }
    if (t.state === 'new') return 'not-found';
    if (t.state === 'ended' || t.state === 'terminal') return 'terminal';
    if (t.state === 'running') return 'locked-by-other';
    if (t.state === 'locked') {
      if (t.lock!.until <= this.now) return 'lock-expired';
      return t.lock!.worker === worker ? 'ok' : 'locked-by-other';
    }
    return 'lock-expired';
  }

  /** A fetch worker, the lock holder mostly. */
  private fetchWorker(t: MTask): string {
    if (t.state === 'locked' && this.r.chance(0.7)) return t.lock!.worker;
    return this.r.pick(FETCH_WORKERS);
  }

  /** `crash`: the call stops between the outcome and the delete (FetchStoreFaults.completeAfterOutcome). */
  private async opFetchComplete(crash = false): Promise<void> {
    const r = this.r;
    const t = this.pickTask();
    const worker = this.fetchWorker(t);
    // an idempotency key: the one of an earlier completion mostly, when there was one
    const key = t.state === 'ended' && t.outcome!.mark !== '' && !t.outcome!.mark.startsWith('\x01') && r.chance(0.7)
      ? t.outcome!.mark : r.chance(0.8) ? `idem-${this.nonce()}` : '';
    const result = r.chance(0.5) ? Buffer.from(`fetch-out-${key}`) : undefined;
    this.trace.push(`fetch complete${crash ? ' (stops after its outcome)' : ''} ${t.spec.taskId} by ${worker} key ${key}`);
    this.fetch.faults.completeAfterOutcome = crash;
    const g = await this.fetch.complete(t.spec.partition, t.spec.taskId, worker, result, key, this.now)
      .catch((err: Error) => ({ kind: 'stopped' as const, message: err.message }))
      .finally(() => { this.fetch.faults.completeAfterOutcome = false; });
    if (t.state === 'ended') {
      if (t.leftover && t.leftover.until > this.now && t.leftover.worker === worker) t.leftover = undefined;
      if (key !== '' && t.outcome!.mark === key) {
        return this.expect(`fetch complete of ${t.spec.taskId} sent again`, g, { kind: 'ok', outcomeId: t.outcome!.id, absorbed: true });
      }
      return this.expect(`late fetch complete of ${t.spec.taskId}`, g, { kind: 'refused', verdict: 'terminal' });
    }
    const v = this.verdict(t, worker);
    if (v !== 'ok') return this.expect(`fetch complete of ${t.spec.taskId} (${t.state})`, g, { kind: 'refused', verdict: v });
    if (crash) {
      // the lock is held a full duration across the dispatch, then lapses and the task is offered again
      const hold = { worker, until: this.now + t.lock!.ms, ms: t.lock!.ms };
      this.end(t, 'COMPLETED', key);
      t.leftover = hold;
      if (g.kind !== 'stopped') this.fail(`fetch complete of ${t.spec.taskId} with its fault: ${JSON.stringify(g)}`);
      return;
    }
    this.end(t, 'COMPLETED', key);
    if (g.kind !== 'ok' || g.absorbed) this.fail(`fetch complete by the lock holder of ${t.spec.taskId}: ${JSON.stringify(g)}`);
    t.outcome!.id = g.outcomeId;
  }

  private async opFetchFail(): Promise<void> {
    const r = this.r;
    const t = this.pickTask();
    const worker = this.fetchWorker(t);
    const retries = r.between(0, 3);
    const retryTimeout = r.between(0, 300);
    this.trace.push(`fetch fail ${t.spec.taskId} by ${worker} retries ${retries} after ${retryTimeout}`);
    const g = await this.fetch.fail(t.spec.partition, t.spec.taskId, worker, 'fetch failed', 'boom', retries, retryTimeout, this.now);
    const v = this.verdict(t, worker);
    if (v !== 'ok') return this.expect(`fetch fail of ${t.spec.taskId} (${t.state})`, g, { kind: 'refused', verdict: v });
    t.fetchRetries = retries;
    if (retries <= 0) {
      this.makeTerminal(t);
      return this.expect(`fetch fail of ${t.spec.taskId}, no retries left`, g, { kind: 'ok', terminal: true, readyAt: 0, queue: t.spec.queue });
    }
    this.toQueued(t, this.now + retryTimeout);
    this.expect(`fetch fail of ${t.spec.taskId}`, g, { kind: 'ok', terminal: false, readyAt: t.readyAt, queue: t.spec.queue });
  }

  private async opExtend(): Promise<void> {
    const t = this.pickTask();
    const worker = this.fetchWorker(t);
    const ms = this.r.between(50, 600);
    this.trace.push(`extend ${t.spec.taskId} by ${worker} for ${ms}`);
    const g = await this.fetch.extend(t.spec.partition, t.spec.taskId, worker, ms, this.now);
    const v = this.verdict(t, worker);
    if (v !== 'ok') return this.expect(`extend of ${t.spec.taskId} (${t.state})`, g, { kind: 'refused', verdict: v });
    t.lock = { worker, until: this.now + ms, ms };
    this.expect(`extend of ${t.spec.taskId}`, g, { kind: 'ok', lockUntil: t.lock.until, queue: t.spec.queue });
  }

  private async opUnlock(): Promise<void> {
    const t = this.pickTask();
    const worker = this.fetchWorker(t);
    this.trace.push(`unlock ${t.spec.taskId} by ${worker}`);
    const g = await this.fetch.unlock(t.spec.partition, t.spec.taskId, worker, this.now);
    const v = this.verdict(t, worker);
    if (v !== 'ok') return this.expect(`unlock of ${t.spec.taskId} (${t.state})`, g, { kind: 'refused', verdict: v });
    this.toQueued(t, t.readyAt);
    this.expect(`unlock of ${t.spec.taskId}`, g, { kind: 'ok', readyAt: t.readyAt, queue: t.spec.queue });
  }

  private async opTerminal(): Promise<void> {
    const terminal = this.tasks.filter((t) => t.state === 'terminal');
    const t = terminal.length > 0 && this.r.chance(0.8) ? this.r.pick(terminal) : this.pickTask();
    const retry = this.r.chance(0.5);
    const p = t.spec.partition;
    this.trace.push(`${retry ? 'retry' : 'abandon'} terminal ${t.spec.taskId}`);
    const g = retry
      ? await this.fetch.retryTerminal(p, t.spec.taskId, 2, this.now)
      : await this.fetch.abandonTerminal(p, t.spec.taskId, 'by test', this.now);
    if (t.leftover) return this.expect(`terminal action on the leftover ${t.spec.taskId}`, g, { kind: 'not-terminal', state: 'locked' });
    if (!this.live(t)) return this.expect(`terminal action on ${t.spec.taskId} (${t.state})`, g, { kind: 'not-found' });
    if (t.state !== 'terminal') return this.expect(`terminal action on ${t.spec.taskId}`, g, { kind: 'not-terminal', state: t.state });
    if (retry) {
      this.toQueued(t, this.now);
      t.fetchRetries = 2;
      t.lockExpiries = 0;
      return this.expect(`retry of terminal ${t.spec.taskId}`, g, { kind: 'queued', queue: t.spec.queue });
    }
    this.end(t, 'FAILED', '');
    if (g.kind !== 'abandoned') this.fail(`abandon of ${t.spec.taskId}: ${JSON.stringify(g)}`);
    t.outcome!.id = g.outcomeId;
  }

  /** Drop a queue from its partition's set of queues: only an empty one goes. */
  private async opPrune(): Promise<void> {
    const p = this.r.pick(PARTITIONS);
    const queue = this.r.pick(QUEUES);
    this.trace.push(`prune ${queue} of ${p}`);
    const inSet = (await this.client.sismember(this.keys.queues(p), queue)) === 1;
    const g = await this.client.zdPruneQueue(this.keys.queues(p), this.keys.queue(p, queue), queue);
    const empty = !this.tasks.some((t) => t.spec.partition === p && t.spec.queue === queue && this.queued(t));
    this.expect(`prune of ${queue} of ${p}`, Number(g), inSet && empty ? 1 : 0);
  }

  private async opLease(): Promise<void> {
    const p = this.r.pick(PARTITIONS);
    const node = this.r.pick(NODES);
    this.trace.push(`lease of ${p} taken by ${node}`);
    await this.takeLease(p, node);
  }

  /** A node restarts: its running attempts are on a boot that is gone. */
  private opReboot(): void {
    const node = this.r.pick(NODES);
    this.boots.set(node, `${node}-boot${this.nonce()}`);
    this.trace.push(`node ${node} restarts as ${this.boots.get(node)}`);
  }

  // ---- the check ---------------------------------------------------------------

  private async dump(): Promise<Dump> {
    const rows = (await (this.client as Redis).eval(DUMP, 0, this.keys.prefix + ':')) as [string, string, string[]][];
    return new Map(rows.map(([k, type, v]) => [k.slice(this.keys.prefix.length + 1), { type, v }]));
  }

  /** Redis holds exactly what the model says, and every index agrees with the task states. */
  private async check(): Promise<void> {
    const d = await this.dump();
    const seen = new Set<string>();
    const get = (key: string, type: string): string[] | undefined => {
      const e = d.get(key);
      if (!e) return undefined;
      seen.add(key);
      if (e.type !== type) this.fail(`${key} is a ${e.type}, want a ${type}`);
      return e.v;
    };
    const zset = (key: string): Map<string, number> => {
      const v = get(key, 'zset') ?? [];
      const m = new Map<string, number>();
      for (let i = 0; i < v.length; i += 2) m.set(v[i]!, Number(v[i + 1]));
      return m;
    };
    const tag = (p: number) => `{${p}}:`;
    for (const p of PARTITIONS) {
      const want = {
        inflight: new Map<string, number>(), terminal: new Set<string>(),
        queues: new Map(QUEUES.map((q) => [q, new Map<string, number>()])),
        deadlinesMust: new Set<string>(), deadlinesMay: new Set<string>(), flows: new Map<string, Set<string>>(),
      };
      const outcomes = new Map<string, { id: string; status: string; attempt: string; worker: string }[]>();
      const stream = get(`${tag(p)}out`, 'stream') ?? [];
      for (let i = 0; i < stream.length; i += 5) {
        const list = outcomes.get(stream[i + 1]!) ?? [];
        list.push({ id: stream[i]!, status: stream[i + 2]!, attempt: stream[i + 3]!, worker: stream[i + 4]! });
        outcomes.set(stream[i + 1]!, list);
      }
      for (const t of this.tasks.filter((x) => x.spec.partition === p)) {
        const id = t.spec.taskId;
        const h = get(`${tag(p)}t:${id}`, 'hash');
        const done = get(`${tag(p)}done:${id}`, 'string');
        const outs = outcomes.get(id) ?? [];
        if (t.state === 'new' || (t.state === 'ended' && !t.leftover)) {
          if (h) this.fail(`${id} is ${t.state} in the model but its hash is there: ${JSON.stringify(h)}`);
        }
        if (t.state === 'new') {
          if (done || outs.length > 0) this.fail(`${id} was never enqueued but has an outcome`);
          continue;
        }
        if (t.state === 'ended') {
          const o = t.outcome!;
          if (outs.length !== 1) this.fail(`${id} ended ${o.status} with ${outs.length} outcome stream entries: ${JSON.stringify(outs)}`);
          if (!done) this.fail(`${id} ended ${o.status} without a done record`);
          o.id ??= outs[0]!.id;
          const [status, outcomeId, mark, , , , , , attempt, worker] = done;
          this.expect(`done record of ${id}`, { status, outcomeId, mark, attempt, worker },
            { status: o.status, outcomeId: o.id, mark: o.mark, attempt: String(o.attempt), worker: o.worker });
          this.expect(`outcome entry of ${id}`, outs[0], { id: o.id, status: o.status, attempt: String(o.attempt), worker: o.worker });
          if (t.leftover) {
            if (!h) this.fail(`${id}: the leftover's hash is gone`);
            const f = new Map<string, string>();
            for (let i = 0; i < h.length; i += 2) f.set(h[i]!, h[i + 1]!);
            this.expect(`leftover ${id}`, [f.get('state'), f.get('lockWorker'), f.get('lockUntil'), Number(f.get('lockExpiries') ?? 0)],
              ['locked', t.leftover.worker, String(t.leftover.until), t.lockExpiries]);
            want.queues.get(t.spec.queue)!.set(id, t.leftover.until);
            if (t.spec.flowDeadline > 0) {
              want.deadlinesMay.add(id);
              want.deadlinesMust.add(id);
            }
            const fk = `flow:${TENANT}:${t.spec.flowId}`;
            want.flows.set(fk, (want.flows.get(fk) ?? new Set<string>()).add(id));
          }
          continue;
        }
        // live
        if (!h) this.fail(`${id} is ${t.state} in the model but its hash is gone (lost)`);
        if (done || outs.length > 0) this.fail(`${id} is ${t.state} but has an outcome: ${JSON.stringify(outs)}`);
        const f = new Map<string, string>();
        for (let i = 0; i < h.length; i += 2) f.set(h[i]!, h[i + 1]!);
        const field = (k: string) => f.get(k);
        this.expect(`${id}: state, attempt`, [field('state'), field('attempt')], [t.state, String(t.attempt)]);
        this.expect(`${id}: lock expiries`, Number(field('lockExpiries') ?? 0), t.lockExpiries);
        if (t.fetchRetries !== undefined) this.expect(`${id}: fetch retries`, field('fetchRetries'), String(t.fetchRetries));
        const running = t.state === 'running';
        const locked = t.state === 'locked';
        this.expect(`${id} (${t.state}): holder fields`,
          { nonce: field('nonce'), worker: field('worker'), lockWorker: field('lockWorker'), lockUntil: field('lockUntil') },
          {
            nonce: running ? t.run!.nonce : undefined,
            worker: running ? t.run!.slot.appWorkerId : locked ? t.lock!.worker : undefined,
            lockWorker: locked ? t.lock!.worker : undefined, lockUntil: locked ? String(t.lock!.until) : undefined,
          });
        if (running) {
          const run = t.run!.layout === 2 ? field('run') : [field('slot'), field('node'), field('boot'), field('startedAt')].join('\x1e');
          const s = t.run!.slot;
          this.expect(`${id}: the slot running it`, run, [s.streamId, s.nodeId, s.bootId, t.run!.startedAt].join('\x1e'));
          want.inflight.set(id, t.run!.deadlineAt);
        } else if (t.state === 'terminal') want.terminal.add(id);
        else {
          if (t.state === 'queued') this.expect(`${id}: readyAt`, field('readyAt'), String(t.readyAt));
          want.queues.get(t.spec.queue)!.set(id, t.state === 'queued' ? t.readyAt : t.lock!.until);
        }
        if (t.spec.flowDeadline > 0) {
          want.deadlinesMay.add(id);
          if (!running) want.deadlinesMust.add(id);
        }
        const fk = `flow:${TENANT}:${t.spec.flowId}`;
        const fs = want.flows.get(fk) ?? new Set<string>();
        fs.add(id);
        want.flows.set(fk, fs);
      }
      const sorted = (m: Map<string, number>) => [...m.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1));
      this.expect(`inflight of ${p}`, sorted(zset(`${tag(p)}inflight`)), sorted(want.inflight));
      this.expect(`terminal set of ${p}`, [...zset(`${tag(p)}terminal`).keys()].sort(), [...want.terminal].sort());
      const queuesSet = new Set(get(`${tag(p)}queues`, 'set') ?? []);
      for (const [q, m] of want.queues) {
        this.expect(`queue ${q} of ${p}`, sorted(zset(`${tag(p)}q:${q}`)), sorted(m));
        if (m.size > 0 && !queuesSet.has(q)) this.fail(`queue ${q} of ${p} holds entries but is not in the queues set`);
      }
      const deadlines = zset(`${tag(p)}deadlines`);
      for (const id of want.deadlinesMust) if (!deadlines.has(id)) this.fail(`${id} waits with a flow deadline but is not in deadlines of ${p}`);
      for (const id of deadlines.keys()) if (!want.deadlinesMay.has(id)) this.fail(`deadlines of ${p} holds ${id}, which is not a live task with a deadline`);
      for (const [fk, ids] of want.flows) this.expect(`${fk} of ${p}`, (get(`${tag(p)}${fk}`, 'set') ?? []).sort(), [...ids].sort());
      for (const [k, v] of this.sticky) {
        const [sp, flowId] = k.split(':');
        if (Number(sp) !== p) continue;
        this.expect(`sticky of ${flowId}`, get(`${tag(p)}sticky:${TENANT}:${flowId}`, 'string'), [v]);
      }
      get(`${tag(p)}lease`, 'string');
      get(`${tag(p)}epoch`, 'string');
    }
    const extra = [...d.keys()].filter((k) => !seen.has(k));
    if (extra.length > 0) this.fail(`keys no task state accounts for: ${extra.join(', ')}`);
  }

  // ---- the run -----------------------------------------------------------------

  async run(steps: number): Promise<{ ended: number; calls: number }> {
    this.makeTasks(this.r.between(4, 8));
    for (const p of PARTITIONS) await this.takeLease(p, this.r.pick(NODES));
    const ops: [number, () => Promise<void> | void][] = [
      [10, () => this.opEnqueue()], [14, () => this.opStart()], [8, () => this.opComplete()],
      [4, () => this.opFail(undefined)], [4, () => this.opFail('due')], [3, () => this.opFail('lost')],
      [4, () => this.opRelease()], [4, () => this.opHeartbeat()], [5, () => this.opTimeout()], [1, () => this.opCancel()],
      [9, () => this.opLock()], [5, () => this.opFetchComplete()], [2, () => this.opFetchComplete(true)], [1, () => this.opPrune()], [4, () => this.opFetchFail()], [4, () => this.opExtend()],
      [3, () => this.opUnlock()], [3, () => this.opTerminal()], [1, () => this.opLease()], [1, () => this.opReboot()],
    ];
    const total = ops.reduce((s, [w]) => s + w, 0);
    try {
      for (let i = 0; i < steps; i++) {
        if (this.r.chance(0.35)) this.now += this.r.between(1, 250);
        if (this.r.chance(0.05)) this.layout = 3 - this.layout;
        // more work once most of it has ended
        if (this.tasks.filter((t) => t.state !== 'ended').length < 6) this.makeTasks(this.r.between(1, 3));
        let x = this.r.int(total);
        const op = ops.find(([w]) => (x -= w) < 0)![1];
        await op();
        await this.check();
      }
    } catch (err) {
      const msg = err instanceof Error ? err.message : String(err);
      throw new Error(`seed ${this.seed} (ZD_RACE_SEED=${this.seed}), layout ${this.layout}, now ${this.now}: ${msg}\n` +
        `last calls:\n  ${this.trace.slice(-25).join('\n  ')}`);
    }
    return { ended: this.tasks.filter((t) => t.state === 'ended').length, calls: this.trace.length };
  }
}

describe('the store\'s scripts in any order', () => {
  let client: RedisClient;
  beforeAll(() => {
    client = createRedis({ url: redis.url, clusterNodes: [], sentinels: [], sentinelName: '', password: '' });
  });
  afterAll(() => client.disconnect());

  it(`keep one holder per attempt, one outcome per task and every index in step with the task states (${SEEDS.length} seeds × ${STEPS} calls)`, async () => {
    let ended = 0;
    for (const seed of SEEDS) {
      const keys = new Keys(uniquePrefix('race'));
      const run = new SeedRun(seed, client, keys);
      ended += (await run.run(STEPS)).ended;
      // the next seed's dumps read only its own keys
      const left = await client.keys(`${keys.prefix}:*`);
      if (left.length > 0) await client.del(...left);
    }
    // the runs reach the ends they are meant to race
    expect(ended).toBeGreaterThan(SEEDS.length * 3);
  }, Math.max(60_000, SEEDS.length * STEPS * 10));
});
