/**
 * DESIGN §11.8 (and §11.4, §11.6) on the gRPC surfaces, as a seeded property:
 * a valid request of each method of MatchingService, ExternalTaskService,
 * OperatorService and WorkerTaskService.Connect, with one field made bad
 * (empty, over-long, control characters, NUL, bytes that are no UTF-8,
 * negative, huge, NaN or Infinity numbers, durations past their ceilings,
 * unknown enum values, oversized repeated fields, a missing Register, task
 * tokens that are garbage, cut short or of another partition), is refused
 * with INVALID_ARGUMENT (or the code the protocol documents) whose message
 * names that field, never INTERNAL or UNKNOWN; and Redis holds exactly what
 * it held before (every key of the node's prefix, its type and its value).
 * The node holds state each call could damage: a queued Step, a locked fetch
 * task, an outcome pending in a group, and an attempt running in a slot.
 * The peer mesh takes hostile messages too: no INTERNAL, nothing written.
 *
 * ZD_FUZZ_SEED=<n> reruns one seed; ZD_FUZZ_CASES scales the run.
 */
import protobuf from 'protobufjs/minimal';
import { ClientError, Status, createChannel, createClient, type Channel } from 'nice-grpc';
import { ExternalTaskServiceDefinition, OperatorServiceDefinition, PeerServiceDefinition, pb, PROTOCOL_VERSION, WorkerTaskServiceDefinition } from '../../src/wire';
import { MatchingServiceDefinition } from '../../src/wire';
import { startTestNode, type TestNode } from '../helpers/node';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { prng } from '../helpers/prng';

const redis = useEmbeddedRedis();
const SEED = Number(process.env.ZD_FUZZ_SEED ?? 0x8e11);
const CASES = Number(process.env.ZD_FUZZ_CASES ?? 400);

type Rng = ReturnType<typeof prng>;

/** Limits of the node under test, small so over-long values stay cheap. */
const L = { queue: 48, flowType: 16, flowTypes: 4, payload: 65_536, batch: 5, maxWait: 400, fetchWait: 300, lock: 600_000, maxTasks: 20 };

/**
 * A string field's stand-in, swapped for bytes that are no UTF-8 (a lone surrogate as
 * CESU-8, 0xFF, an over-long '/') after encoding: protobufjs writes only valid text.
 */
const MARK = 'ZZBADUTF8ZZ';
const BAD_UTF8 = Buffer.from([0x61, 0xed, 0xa0, 0x80, 0x62, 0xff, 0x63, 0xc0, 0xaf, 0x64, 0x65]);

function withBadUtf8(bytes: Uint8Array): Buffer {
  const b = Buffer.from(bytes);
  for (let i = b.indexOf(MARK); i >= 0; i = b.indexOf(MARK, i + 1)) BAD_UTF8.copy(b, i);
  return b;
}

/** Names (tenants, types, groups): none of these matches [A-Za-z0-9_][A-Za-z0-9_.-]* within `max`. */
function badName(r: Rng, max: number, required = true): string {
  const pool = ['a:b', '{1}', 'a b', 'ténant', 'e\u0301', 'x\u0000', '\u0000', 'x\n', '-x', '.x', '😀', 'a/b', 'x'.repeat(max + 1), MARK, 'x\u200b'];
  return r.pick(required ? [...pool, ''] : pool);
}

/** Caller-chosen ids: control characters (NUL, C1, line separators), over-long, no UTF-8. */
function badId(r: Rng, max: number, required = true): string {
  const pool = ['\u0000', 'a\u0000b', 'a\nb', '\u007f', '\u0085x', 'x\u2028', 'x\u2029', '\t', 'x'.repeat(max + 1), MARK];
  return r.pick(required ? [...pool, ''] : pool);
}

const badDuration = (r: Rng, max: number) => r.pick([max + 1, 2 ** 53 + 2, -1, 2 ** 62]);
const badTimestamp = (r: Rng) => r.pick([-1, -(2 ** 53), 8_640_000_000_001, 2 ** 53 + 2, -(2 ** 62)]);
const badCount = (r: Rng, max: number) => r.pick([max + 1, 2 ** 32 - 1, -1]);

/** Task ids: garbage, cut short, upper-case, a partition the cluster does not have (8), too long. */
function badTaskId(r: Rng, real: string): string {
  const [p, h] = real.split('-') as [string, string];
  return r.pick(['', 'garbage', real.slice(0, -1), `${p}-${h.toUpperCase().replace(/[a-f]/, 'A')}`, `8-${h}`, `99999999-${h}`, `${real}0`, `-${h}`, MARK, `${p}-${h}\u0000`, 'x'.repeat(65)]);
}

type Unary = (req: Uint8Array, opts?: object) => Promise<unknown>;

/** A raw client: requests are bytes as given; answers decode as usual. */
function rawClient(def: Record<string, object>, channel: Channel): Record<string, Unary> {
  const raw: Record<string, object> = {};
  for (const [k, m] of Object.entries(def)) raw[k] = { ...m, requestSerialize: (b: Uint8Array) => b };
  return createClient(raw as never, channel) as unknown as Record<string, Unary>;
}

interface Case {
  label: string;
  bytes: Uint8Array;
  /** The field the refusal must name (first in the message). */
  field: string;
  code?: Status;
}

type Mutation = [field: string, mutate: (req: any, r: Rng) => void, code?: Status]; // eslint-disable-line @typescript-eslint/no-explicit-any

/** The mutations of one StepSpec, fields named under `at` ("step", "steps[1]"). */
function stepMutations(at: string): Mutation[] {
  const s = (f: (step: any, r: Rng) => void) => (req: any, r: Rng) => f(at === 'step' ? req.step : req.steps[Number(/\d+/.exec(at)![0])], r); // eslint-disable-line @typescript-eslint/no-explicit-any
  return [
    [`${at}.tenant`, s((x, r) => (x.tenant = badName(r, L.queue)))],
    [`${at}.flow_id`, s((x, r) => (x.flow_id = badId(r, 512)))],
    [`${at}.flow_type`, s((x, r) => (x.flow_type = badName(r, L.flowType)))],
    [`${at}.step_type`, s((x, r) => (x.step_type = badName(r, L.queue)))],
    [`${at}.step_type`, s((x) => (x.step_type = 's'.repeat(L.queue - 10)))], // the queue name past maxQueueLength
    [`${at}.step_execution_id`, s((x, r) => (x.step_execution_id = badId(r, 512)))],
    [`${at}.input`, s((x) => (x.input = Buffer.alloc(L.payload + 1, 1)))],
    [`${at}.ready_at_ms`, s((x, r) => (x.ready_at_ms = badTimestamp(r)))],
    [`${at}.flow_deadline_ms`, s((x, r) => (x.flow_deadline_ms = badTimestamp(r)))],
    [`${at}.method_timeout_ms`, s((x, r) => (x.method_timeout_ms = badDuration(r, 366 * 86_400_000)))],
    [`${at}.heartbeat_timeout_ms`, s((x, r) => (x.heartbeat_timeout_ms = badDuration(r, 366 * 86_400_000)))],
    [`${at}.retry_policy.max_attempts`, s((x, r) => (x.retry_policy = { max_attempts: badCount(r, 10_000) }))],
    [`${at}.retry_policy.initial_interval_ms`, s((x, r) => (x.retry_policy = { initial_interval_ms: badDuration(r, 366 * 86_400_000) }))],
    [`${at}.retry_policy.max_interval_ms`, s((x, r) => (x.retry_policy = { max_interval_ms: badDuration(r, 366 * 86_400_000) }))],
    [`${at}.retry_policy.max_interval_ms`, s((x) => (x.retry_policy = { initial_interval_ms: 5000, max_interval_ms: 4999 }))],
    [`${at}.retry_policy.backoff_coefficient`, s((x, r) => (x.retry_policy = { backoff_coefficient: r.pick([NaN, Infinity, -Infinity, 0.5, -1, 100.5, 1e308, 5e-324]) }))],
    [`${at}.retry_policy.non_retryable`, s((x) => (x.retry_policy = { non_retryable: Array.from({ length: 65 }, (_, i) => `t${i}`) }))],
    [`${at}.retry_policy.non_retryable[1]`, s((x, r) => (x.retry_policy = { non_retryable: ['ok', badId(r, 256)] }))],
    [`${at}.sticky_worker_id`, s((x, r) => (x.sticky_worker_id = badId(r, L.queue, false)))],
  ];
}

it(`refuses a bad field of every gRPC request, naming it, and changes nothing in Redis (seed ${SEED}, ${CASES} cases)`, async () => {
  const prefix = uniquePrefix('gprop');
  const t: TestNode = await startTestNode(redis.url, prefix, {
    'matching.maxQueueLength': L.queue, 'matching.maxFlowTypeLength': L.flowType, 'matching.maxFlowTypes': L.flowTypes,
    'limits.maxPayloadBytes': L.payload, 'limits.maxBatch': L.batch, 'limits.maxWait': `${L.maxWait}ms`,
    'fetch.maxWait': `${L.fetchWait}ms`, 'fetch.wait': '100ms', 'fetch.maxLockDuration': `${L.lock}ms`, 'fetch.lockDuration': '60s',
    'fetch.maxMaxTasks': L.maxTasks, 'matching.dispatchWait': '200ms', 'matching.stickyWait': '100ms',
  });
  const r = prng(SEED);
  const failures: string[] = [];
  const statuses = new Map<string, number>();
  const count = (k: string) => statuses.set(k, (statuses.get(k) ?? 0) + 1);
  const ext = createClient(ExternalTaskServiceDefinition, t.channel);
  const worker = rawClient(WorkerTaskServiceDefinition as never, t.channel);
  const peerChannel = createChannel(t.node.internalAddress);
  try {
    // ---- state each call could damage --------------------------------------------------------
    const queued = await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'q1', flow_type: 'idle', step_type: 's', step_execution_id: '1' } });
    const fetchable = await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'x1', flow_type: 'ext', step_type: 'e', step_execution_id: '1' } });
    const locked = await ext.fetchAndLock({ worker_id: 'fw', topics: [{ tenant: 'acme', flow_type: 'ext', step_type: 'e' }], lock_duration_ms: L.lock });
    expect(locked.tasks.map((x) => x.task_id)).toEqual([fetchable.task_id]);
    const held = openRawSlot(worker, 'wf');
    await held.next('registered');
    await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'w1', flow_type: 'wf', step_type: 's', step_execution_id: '1' } });
    const first = (await held.next('step_task')).step_task!;
    held.send(pb.WorkerFrame.encode({ step_result: { task_token: first.task_token, output: Buffer.from('done') } }).finish());
    expect((await held.next('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.ACCEPTED);
    const consumed = await t.matching.consumeOutcomes({ group: 'g1', consumer: 'c1', wait_ms: 0 });
    expect(consumed.outcomes).toHaveLength(1);
    const outcomeId = consumed.outcomes[0]!.outcome_id ?? '';
    await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'w2', flow_type: 'wf', step_type: 's', step_execution_id: '1' } });
    const running = (await held.next('step_task')).step_task!;
    const token = running.task_token ?? '';
    const before = await snapshot(prefix);
    expect(before.some((k) => k.includes(':inflight"'))).toBe(true);
    // nothing moves by itself while nobody calls
    await new Promise((res) => setTimeout(res, 300));
    expect(await snapshot(prefix)).toEqual(before);

    // ---- the methods, each a valid request and its bad fields ---------------------------------
    const step = () => ({ tenant: 'acme', flow_id: 'f1', flow_type: 'order', step_type: 'charge', step_execution_id: 'e1', input: Buffer.from('in') });
    const topic = () => ({ tenant: 'acme', flow_type: 'ext', step_type: 'e' });
    const matchingMethods: Record<string, { cls: { encode(m: object): protobuf.Writer }; base(): any; muts: Mutation[] }> = { // eslint-disable-line @typescript-eslint/no-explicit-any
      enqueueStep: { cls: pb.EnqueueStepRequest, base: () => ({ step: step() }), muts: [...stepMutations('step'), ['step', (q) => delete q.step]] },
      enqueueSteps: {
        cls: pb.EnqueueStepsRequest, base: () => ({ steps: [step(), { ...step(), step_execution_id: 'e2' }] }),
        muts: [...stepMutations('steps[0]'), ...stepMutations('steps[1]'), ['steps', (q) => (q.steps = [])],
          ['steps', (q) => (q.steps = Array.from({ length: L.batch + 1 }, (_, i) => ({ ...step(), step_execution_id: `b${i}` })))]],
      },
      getTask: { cls: pb.GetTaskRequest, base: () => ({ task_id: queued.task_id }), muts: [['task_id', (q, rr) => (q.task_id = badTaskId(rr, queued.task_id))]] },
      waitOutcome: {
        cls: pb.WaitOutcomeRequest, base: () => ({ task_id: queued.task_id, wait_ms: 0 }),
        muts: [['task_id', (q, rr) => (q.task_id = badTaskId(rr, queued.task_id))], ['wait_ms', (q, rr) => (q.wait_ms = badDuration(rr, L.maxWait))]],
      },
      consumeOutcomes: {
        cls: pb.ConsumeOutcomesRequest, base: () => ({ group: 'g1', consumer: 'c2', max_count: 10, wait_ms: 0, ack: [] }),
        muts: [
          ['group', (q, rr) => (q.group = badName(rr, L.queue))], ['consumer', (q, rr) => (q.consumer = badName(rr, L.queue))],
          ['max_count', (q, rr) => (q.max_count = badCount(rr, 1000))], ['wait_ms', (q, rr) => (q.wait_ms = badDuration(rr, L.maxWait))],
          ['redeliver_after_ms', (q, rr) => (q.redeliver_after_ms = badDuration(rr, 366 * 86_400_000))],
          ['tenant', (q, rr) => (q.tenant = badName(rr, L.queue, false))],
          ['ack[1]', (q, rr) => (q.ack = [outcomeId, badOutcomeId(rr, outcomeId)])],
          ['ack', (q) => (q.ack = Array.from({ length: 10_001 }, () => '0-0-0'))],
        ],
      },
      ackOutcomes: {
        cls: pb.AckOutcomesRequest, base: () => ({ group: 'g1', outcome_ids: [outcomeId] }),
        muts: [
          ['group', (q, rr) => (q.group = badName(rr, L.queue))], ['outcome_ids', (q) => (q.outcome_ids = [])],
          ['outcome_ids[0]', (q, rr) => (q.outcome_ids = [badOutcomeId(rr, outcomeId), outcomeId])],
          ['outcome_ids', (q) => (q.outcome_ids = Array.from({ length: 10_001 }, () => '0-0-0'))],
          ['tenant', (q, rr) => (q.tenant = badName(rr, L.queue, false))],
        ],
      },
      cancelFlow: {
        cls: pb.CancelFlowRequest, base: () => ({ tenant: 'acme', flow_id: 'w2', reason: 'r' }),
        muts: [['tenant', (q, rr) => (q.tenant = badName(rr, L.queue))], ['flow_id', (q, rr) => (q.flow_id = badId(rr, 512))],
          ['reason', (q, rr) => (q.reason = badId(rr, 1024, false))]],
      },
      describeQueues: {
        cls: pb.DescribeQueuesRequest, base: () => ({ tenant: 'acme', flow_type: 'idle' }),
        muts: [['tenant', (q, rr) => (q.tenant = badName(rr, L.queue))], ['flow_type', (q, rr) => (q.flow_type = badName(rr, L.flowType, false))]],
      },
      invokeRpc: {
        cls: pb.InvokeRpcRequest, base: () => ({ tenant: 'acme', flow_id: 'w2', flow_type: 'wf', rpc_name: 'peek', input: Buffer.from('x'), timeout_ms: 100 }),
        muts: [
          ['tenant', (q, rr) => (q.tenant = badName(rr, L.queue))], ['flow_id', (q, rr) => (q.flow_id = badId(rr, 512))],
          ['flow_type', (q, rr) => (q.flow_type = badName(rr, L.flowType))], ['rpc_name', (q, rr) => (q.rpc_name = badName(rr, L.queue))],
          ['input', (q) => (q.input = Buffer.alloc(L.payload + 1))], ['timeout_ms', (q, rr) => (q.timeout_ms = badDuration(rr, 2_147_483_647))],
          ['sticky_worker_id', (q, rr) => (q.sticky_worker_id = badId(rr, L.queue, false))],
        ],
      },
      dropOutcomeGroup: {
        cls: pb.DropOutcomeGroupRequest, base: () => ({ group: 'g1', force: true }),
        muts: [['group', (q, rr) => (q.group = badId(rr, 512))], ['tenant', (q, rr) => (q.tenant = badName(rr, L.queue, false))]],
      },
    };
    const lockedId = fetchable.task_id;
    const externalMethods: typeof matchingMethods = {
      fetchAndLock: {
        cls: pb.FetchAndLockRequest, base: () => ({ worker_id: 'fw2', topics: [topic()], max_tasks: 1, lock_duration_ms: 1000, wait_ms: 0 }),
        muts: [
          ['worker_id', (q, rr) => (q.worker_id = badId(rr, L.queue))], ['topics', (q) => (q.topics = [])],
          ['topics', (q) => (q.topics = Array.from({ length: L.flowTypes + 1 }, topic))],
          ['topics[1].tenant', (q, rr) => (q.topics = [topic(), { ...topic(), tenant: badName(rr, L.queue) }])],
          ['topics[0].flow_type', (q, rr) => (q.topics = [{ ...topic(), flow_type: badName(rr, L.flowType) }])],
          ['topics[0].step_type', (q, rr) => (q.topics = [{ ...topic(), step_type: badName(rr, L.queue) }])],
          ['max_tasks', (q, rr) => (q.max_tasks = badCount(rr, L.maxTasks))], ['lock_duration_ms', (q, rr) => (q.lock_duration_ms = badDuration(rr, L.lock))],
          ['wait_ms', (q, rr) => (q.wait_ms = badDuration(rr, L.fetchWait))],
        ],
      },
      complete: {
        cls: pb.CompleteRequest, base: () => ({ task_id: lockedId, worker_id: 'fw', result: Buffer.from('r'), has_result: true, idempotency_key: 'k' }),
        muts: [
          ['task_id', (q, rr) => (q.task_id = badTaskId(rr, lockedId))], ['worker_id', (q, rr) => (q.worker_id = badId(rr, L.queue))],
          ['result', (q) => (q.result = Buffer.alloc(L.payload + 1))], ['has_result', (q) => (q.has_result = false)],
          ['idempotency_key', (q, rr) => (q.idempotency_key = badId(rr, 512, false))],
        ],
      },
      fail: {
        cls: pb.FailRequest, base: () => ({ task_id: lockedId, worker_id: 'fw', failure: { message: 'm', type: 't' }, retries: 2, retry_timeout_ms: 10 }),
        muts: [
          ['task_id', (q, rr) => (q.task_id = badTaskId(rr, lockedId))], ['worker_id', (q, rr) => (q.worker_id = badId(rr, L.queue))],
          ['failure.message', (q) => (q.failure.message = 'm'.repeat(4097))], ['failure.type', (q) => (q.failure.type = 't'.repeat(257))],
          ['failure.message', (q) => (q.failure.message = `a${MARK}`)], ['failure.type', (q) => (q.failure.type = MARK)],
          ['retries', (q, rr) => (q.retries = rr.pick([-1, -(2 ** 31)]))], ['retry_timeout_ms', (q, rr) => (q.retry_timeout_ms = badDuration(rr, 366 * 86_400_000))],
          ['failure.non_retryable', (q) => (q.failure.non_retryable = true)], ['failure.retry_after_ms', (q) => (q.failure.retry_after_ms = 5)],
        ],
      },
      extendLock: {
        cls: pb.ExtendLockRequest, base: () => ({ task_id: lockedId, worker_id: 'fw', lock_duration_ms: 1000 }),
        muts: [['task_id', (q, rr) => (q.task_id = badTaskId(rr, lockedId))], ['worker_id', (q, rr) => (q.worker_id = badId(rr, L.queue))],
          ['lock_duration_ms', (q, rr) => (q.lock_duration_ms = badDuration(rr, L.lock))]],
      },
      unlock: {
        cls: pb.UnlockRequest, base: () => ({ task_id: lockedId, worker_id: 'fw' }),
        muts: [['task_id', (q, rr) => (q.task_id = badTaskId(rr, lockedId))], ['worker_id', (q, rr) => (q.worker_id = badId(rr, L.queue))]],
      },
    };
    const operatorMethods: typeof matchingMethods = {
      listTerminalTasks: {
        cls: pb.ListTerminalTasksRequest, base: () => ({ tenant: 'acme', limit: 5 }),
        muts: [['tenant', (q, rr) => (q.tenant = badName(rr, L.queue))], ['flow_type', (q, rr) => (q.flow_type = badName(rr, L.flowType, false))],
          ['step_type', (q, rr) => (q.step_type = badName(rr, L.queue, false))], ['limit', (q, rr) => (q.limit = badCount(rr, 1000))]],
      },
      retryTerminalTask: {
        cls: pb.RetryTerminalTaskRequest, base: () => ({ task_id: lockedId, retries: 1 }),
        muts: [['task_id', (q, rr) => (q.task_id = badTaskId(rr, lockedId))], ['retries', (q, rr) => (q.retries = rr.pick([-1, -(2 ** 31)]))]],
      },
      abandonTerminalTask: {
        cls: pb.AbandonTerminalTaskRequest, base: () => ({ task_id: lockedId, reason: 'r' }),
        muts: [['task_id', (q, rr) => (q.task_id = badTaskId(rr, lockedId))], ['reason', (q, rr) => (q.reason = badId(rr, 1024, false))]],
      },
    };
    const services = [
      { def: MatchingServiceDefinition, methods: matchingMethods },
      { def: ExternalTaskServiceDefinition, methods: externalMethods },
      { def: OperatorServiceDefinition, methods: operatorMethods },
    ].map((s) => ({ ...s, client: rawClient(s.def as never, t.channel) }));
    const rawMatching = services[0]!.client;

    const unaryCase = (): Case & { call: Unary } => {
      const s = r.pick(services);
      const name = r.pick(Object.keys(s.methods));
      const m = s.methods[name]!;
      const [field, mutate, code] = r.pick(m.muts);
      const req = m.base();
      mutate(req, r);
      return { label: name, field, code, bytes: withBadUtf8(m.cls.encode(req).finish()), call: s.client[name]! };
    };

    // ---- the checks --------------------------------------------------------------------------
    const check = (c: { label: string; field: string; code?: Status }, err: unknown) => {
      const want = c.code ?? Status.INVALID_ARGUMENT;
      if (!(err instanceof ClientError)) {
        count('OK');
        failures.push(`${c.label} (${c.field}): answered ${err === undefined ? 'OK' : String(err)}`);
        return;
      }
      count(Status[err.code]);
      if (err.code !== want) failures.push(`${c.label} (${c.field}): ${Status[err.code]} ${err.details.slice(0, 160)}`);
      else if (want === Status.INVALID_ARGUMENT && !err.details.startsWith(`ZD_INVALID_ARGUMENT: ${c.field}: `)) {
        failures.push(`${c.label} (${c.field}): names no field: ${err.details.slice(0, 160)}`);
      }
    };
    const unchanged = async (label: string) => {
      const now = await snapshot(prefix);
      if (JSON.stringify(now) !== JSON.stringify(before)) {
        failures.push(`${label}: Redis changed: ${diff(before, now).slice(0, 4).join(' | ').slice(0, 400)}`);
        return false;
      }
      return true;
    };

    // Well-formed requests that match nothing (DESIGN §11.4): a documented verdict, never OK.
    const verdicts = [Status.NOT_FOUND, Status.ABORTED, Status.OUT_OF_RANGE, Status.FAILED_PRECONDITION];
    const operator = createClient(OperatorServiceDefinition, t.channel);
    const elsewhere = `${(Number(lockedId.split('-')[0]) + 1) % 8}-${lockedId.split('-')[1]}`;
    const noMatch: [string, (id: string) => Promise<unknown>][] = [
      ['complete', (id) => ext.complete({ task_id: id, worker_id: 'other', has_result: true, result: Buffer.from('r') })],
      ['fail', (id) => ext.fail({ task_id: id, worker_id: 'other', failure: { message: 'm' }, retries: 0 })],
      ['extendLock', (id) => ext.extendLock({ task_id: id, worker_id: 'other', lock_duration_ms: 1000 })],
      ['unlock', (id) => ext.unlock({ task_id: id, worker_id: 'other' })],
      ['retryTerminalTask', (id) => operator.retryTerminalTask({ task_id: id })],
      ['abandonTerminalTask', (id) => operator.abandonTerminalTask({ task_id: id, reason: 'r' })],
      ['getTask', () => t.matching.getTask({ task_id: elsewhere })],
      ['waitOutcome', () => t.matching.waitOutcome({ task_id: elsewhere })],
      ['ackOutcomes', () => t.matching.ackOutcomes({ group: 'nope', outcome_ids: [outcomeId] })],
      ['dropOutcomeGroup', () => t.matching.dropOutcomeGroup({ group: 'nope', force: true })],
    ];
    const noMatchIds = [lockedId, queued.task_id ?? '', running.task_id ?? '', elsewhere];

    const frameCases = workerFrameCases(token);
    for (let i = 0; i < CASES; i++) {
      const k = r.int(12);
      if (k >= 10) {
        // the fetch worker's own task under another worker's name, a queued or running Step, a task of no partition's
        const [name, call] = r.pick(noMatch);
        const id = r.pick(noMatchIds);
        const err = await call(id).then(() => undefined, (e: unknown) => e);
        if (!(err instanceof ClientError) || !verdicts.includes(err.code)) {
          failures.push(`#${i} ${name} ${id}: ${err instanceof ClientError ? `${Status[err.code]} ${err.details}` : 'answered OK'}`);
        } else count(`no match ${Status[err.code]}`);
      } else if (k < 6) {
        const c = unaryCase();
        const err = await c.call(c.bytes, { signal: AbortSignal.timeout(5000) }).then(() => undefined, (e: unknown) => e);
        check({ ...c, label: `#${i} ${c.label} ${Buffer.from(c.bytes.slice(0, 40)).toString('hex')}` }, err);
      } else if (k < 7) {
        // EnqueueStream: a bad Step is answered on the stream, as EnqueueSteps would end its call
        const [field, mutate] = r.pick(stepMutations('steps[0]'));
        const req = { request_id: 7, steps: [step()] };
        mutate(req, r);
        const answers = await collect(rawMatching.enqueueStream as never, [withBadUtf8(pb.EnqueueStreamRequest.encode(req).finish())]);
        const got = (answers.frames[0] as pb.EnqueueStreamResponse | undefined)?.error;
        // the stream goes on: it carries a producer's other enqueues
        if (answers.error) failures.push(`#${i} enqueueStream (${field}): the stream ended: ${String(answers.error)}`);
        else if (!got) failures.push(`#${i} enqueueStream (${field}): no error answered`);
        else if (got.code !== Status.INVALID_ARGUMENT || !(got.message ?? '').startsWith(`ZD_INVALID_ARGUMENT: ${field}: `)) {
          failures.push(`#${i} enqueueStream (${field}): ${Status[got.code ?? 0]} ${(got.message ?? '').slice(0, 160)}`);
        } else count('INVALID_ARGUMENT (stream)');
      } else if (k < 8) {
        // Register on a stream of its own
        const c = registerCase(r);
        const res = await collect(worker.connect as never, [c.bytes], 1);
        check({ label: `#${i} connect ${c.field}`, field: c.field, code: c.code }, res.error ?? (res.frames.length ? undefined : new Error('stream ended without an error')));
      } else {
        // a worker frame on the stream that holds the running attempt
        const c = r.pick(frameCases)(r);
        held.send(c.bytes);
        if (c.verdict === undefined) {
          // no answer (a heartbeat): the stream still answers a stale result after it
          held.send(pb.WorkerFrame.encode({ step_result: { task_token: 'probe', output: Buffer.alloc(0) } }).finish());
        }
        const ack = await held.next('result_ack').catch((e: Error) => e);
        if (ack instanceof Error) {
          failures.push(`#${i} frame ${c.field}: ${ack.message}`);
          break;
        }
        const a = ack.result_ack!;
        const want = c.verdict ?? pb.ResultVerdict.REFUSED_STALE;
        const field = c.verdict === undefined ? 'step_result.task_token' : c.field;
        const verdict = pb.ResultVerdict[a.verdict ?? 0];
        count(`frame ${verdict}`);
        if (a.verdict !== want || !(a.error ?? '').startsWith(`${field}: `)) {
          failures.push(`#${i} frame ${c.field}: ${verdict} ${(a.error ?? '').slice(0, 160)}`);
        }
      }
      if (!(await unchanged(`#${i}`))) break;
    }

    // ---- an RPC held by a slot: its bad results are refused, naming the field -----------------
    const rpcSlot = openRawSlot(worker, 'rpcf', pb.SlotKind.RPC_ONLY);
    await rpcSlot.next('registered');
    const invoked = t.matching.invokeRpc({ tenant: 'acme', flow_id: 'r1', flow_type: 'rpcf', rpc_name: 'peek', timeout_ms: 20_000 });
    const rpcToken = (await rpcSlot.next('rpc_task')).rpc_task!.task_token ?? '';
    const enc = (f: pb.IWorkerFrame) => withBadUtf8(pb.WorkerFrame.encode(f).finish());
    const rpcCases: [string, pb.ResultVerdict, pb.IWorkerFrame][] = [
      ...['', 'x', rpcToken.slice(0, -1), `${rpcToken}0`, token].map((tok): [string, pb.ResultVerdict, pb.IWorkerFrame] =>
        ['rpc_result.task_token', pb.ResultVerdict.REFUSED_STALE, { rpc_result: { task_token: tok, output: Buffer.from('x') } }]),
      ['rpc_result.result', pb.ResultVerdict.REFUSED_INVALID, { rpc_result: { task_token: rpcToken } }],
      ['rpc_result.failure.message', pb.ResultVerdict.REFUSED_INVALID, { rpc_result: { task_token: rpcToken, failure: { message: 'm'.repeat(4097) } } }],
      ['rpc_result.failure.type', pb.ResultVerdict.REFUSED_INVALID, { rpc_result: { task_token: rpcToken, failure: { type: MARK } } }],
      ['decline.reason', pb.ResultVerdict.REFUSED_INVALID, { decline: { task_token: rpcToken, reason: 42 as pb.DeclineReason } }],
      // the last: no valid output can follow an oversized one, so the call ends with a failure
      ['rpc_result.output', pb.ResultVerdict.REFUSED_INVALID, { rpc_result: { task_token: rpcToken, output: Buffer.alloc(L.payload + 1) } }],
    ];
    for (const [field, verdict, frame] of rpcCases) {
      rpcSlot.send(enc(frame));
      const a = (await rpcSlot.next('result_ack')).result_ack!;
      count(`rpc ${pb.ResultVerdict[a.verdict ?? 0]}`);
      if (a.verdict !== verdict || !(a.error ?? '').startsWith(`${field}: `)) failures.push(`rpc ${field}: ${pb.ResultVerdict[a.verdict ?? 0]} ${a.error ?? ''}`);
    }
    expect((await invoked).failure).toMatchObject({ type: 'invalid_result' });
    rpcSlot.close();
    await unchanged('rpc results');

    // ---- the peer mesh: hostile messages from whoever reaches internal.listen ----------------
    const peer = createClient(PeerServiceDefinition, peerChannel);
    for (let i = 0; i < 40; i++) {
      const part = r.pick([0, 3, 7, 8, 2 ** 32 - 1]);
      const id = r.pick([queued.task_id, running.task_id, lockedId, 'garbage', '', MARK.toLowerCase()]);
      const ref = { partition: part, task_id: id, attempt: r.pick([0, 1, 2, 2 ** 32 - 1]), tenant: r.pick(['acme', 'a:b', '']), flow_type: r.pick(['wf', 'idle', '']), step_type: 's', path: r.pick(['sticky', 'x', '']) };
      const which = r.int(6);
      const label = `#peer${i} ${['offer', 'offerBatch', 'doorbell', 'cancelAttempts', 'capacity', 'heldAttempts'][which]}`;
      const err = await (which === 0 ? peer.offer({ ref, owner_node_id: 'nobody', epoch: 1 })
        : which === 1 ? peer.offerBatch({ offers: [{ ref }, { ref: null }, {}] })
          : which === 2 ? peer.doorbell({ from_node_id: r.pick(['', 'x', t.node.nodeId]), events: [{ kind: r.pick([0, 1, 2, 3, 4, 5, 6, 99]) as pb.DoorbellEvent.Kind, partition: part, task_id: id, queue: r.pick(['acme:idle:s', 'x', '']), at_ms: badTimestamp(r) }] })
            : which === 3 ? peer.cancelAttempts({ attempts: [{ task_id: id, attempt: 2, nonce: token.split('.')[3], stream_id: r.pick(['', 'x']) }], reason: 'x' })
              : which === 4 ? peer.capacity({ node_id: r.pick(['', 'ghost']), seq: r.pick([0, 1, 2 ** 53]), entries: [{ tenant: 'acme', flow_type: 'idle', idle_step_slots: 2 ** 32 - 1 }] })
                : peer.heldAttempts({ boot_id: r.pick(['', 'x', t.node.bootId]), nonces: r.pick([[token.split('.')[3]!], ['x', ''], []]) }))
        .then(() => undefined, (e: unknown) => e);
      if (err instanceof ClientError && (err.code === Status.INTERNAL || err.code === Status.UNKNOWN)) failures.push(`${label}: ${Status[err.code]} ${err.details}`);
      else if (err !== undefined && !(err instanceof ClientError)) failures.push(`${label}: ${String(err)}`);
      // messages are handled after the answer: give them a moment
      await new Promise((res) => setTimeout(res, 20));
      if (!(await unchanged(label))) break;
    }

    // bytes that are no message of the method, or whose text is no UTF-8: refused, naming the field
    const rawPeer = rawClient(PeerServiceDefinition as never, peerChannel);
    const garbled = [Buffer.from([0x0a, 0xff, 0xff, 0xff]), Buffer.from([0x0f, 0x01])];
    const peerText: [string, string, Uint8Array][] = [
      ['offer', 'ref.task_id', pb.OfferRequest.encode({ ref: { partition: 1, task_id: MARK } }).finish()],
      ['offerBatch', 'offers[0].ref.task_id', pb.OfferBatchRequest.encode({ offers: [{ ref: { task_id: MARK } }] }).finish()],
      ['capacity', 'node_id', pb.CapacityUpdate.encode({ node_id: MARK, seq: 1 }).finish()],
      ['doorbell', 'from_node_id', pb.DoorbellRequest.encode({ from_node_id: MARK, events: [{ kind: 1 }] }).finish()],
      ['cancelAttempts', 'reason', pb.CancelAttemptsRequest.encode({ attempts: [{ task_id: 'x' }], reason: MARK }).finish()],
      ['invokeRpc', 'tenant', pb.InvokeRpcRequest.encode({ tenant: MARK, flow_type: 'wf', rpc_name: 'x' }).finish()],
      ['heldAttempts', 'nonces[1]', pb.HeldAttemptsRequest.encode({ boot_id: 'b', nonces: ['x', MARK] }).finish()],
    ];
    for (const [name, field, bytes] of [...peerText.flatMap(([n]) => garbled.map((g): [string, string, Uint8Array] => [n, 'request', g])), ...peerText]) {
      const err = await rawPeer[name]!(withBadUtf8(bytes), { signal: AbortSignal.timeout(3000) }).then(() => undefined, (e: unknown) => e);
      check({ label: `peer ${name}`, field }, err);
    }
    for (const [field, frame] of [['frame', garbled[0]!], ['capacity.node_id', withBadUtf8(pb.LinkFrame.encode({ capacity: { node_id: MARK } }).finish())]] as const) {
      const res = await collect(rawPeer.link as never, [frame], 2);
      check({ label: 'peer link', field }, res.error ?? new Error(`answered ${res.frames.length} frames, no error`));
    }
    // a question over the bound of one call: refused, naming the list
    check({ label: 'peer heldAttempts over the bound', field: 'nonces' },
      await peer.heldAttempts({ boot_id: t.node.bootId, nonces: Array.from({ length: 1001 }, (_, i) => `n${i}`) }).then(() => undefined, (e: unknown) => e));
    await unchanged('peer frames');

    if (process.env.ZD_FUZZ_TIMING) console.log(JSON.stringify([...statuses]));
    expect(failures.slice(0, 30)).toEqual([]);
    expect(t.node.state).toBe('running');
    // the run covered the ground it claims to
    expect(statuses.get('INVALID_ARGUMENT')).toBeGreaterThan(CASES / 3);
    expect(statuses.get('frame REFUSED_INVALID')).toBeGreaterThan(0);
    expect(statuses.get('frame REFUSED_STALE')).toBeGreaterThan(0);
    expect(statuses.get('FAILED_PRECONDITION')).toBeGreaterThan(0);
    // the attempt is still the slot's: a valid result is taken
    held.send(pb.WorkerFrame.encode({ step_result: { task_token: token, output: Buffer.from('ok') } }).finish());
    expect((await held.next('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.ACCEPTED);
    held.close();
  } finally {
    peerChannel.close();
    await t.close();
  }
}, 60_000);

function badOutcomeId(r: Rng, real: string): string {
  return r.pick(['', 'x', real.replace(/^\d+/, '8'), `${real}-1`, '1-99999999999999999999999-0', '1-1', MARK, `${real}\u0000`, '-1-1']);
}

/** A Register with one bad field, or a first frame that is no Register. */
function registerCase(r: Rng): { field: string; bytes: Uint8Array; code?: Status } {
  const reg: pb.IRegister = { protocol_version: PROTOCOL_VERSION, tenant: 'acme', app_worker_id: 'w9', flow_types: ['wf'], slot_kind: pb.SlotKind.STEP_AND_RPC, task_limit: 1 };
  const muts: [string, () => void, Status?][] = [
    ['register.tenant', () => (reg.tenant = badName(r, L.queue))],
    ['register.app_worker_id', () => (reg.app_worker_id = badName(r, L.queue))],
    ['register.flow_types', () => (reg.flow_types = [])],
    ['register.flow_types', () => (reg.flow_types = Array.from({ length: L.flowTypes + 1 }, (_, i) => `f${i}`))],
    ['register.flow_types[1]', () => (reg.flow_types = ['wf', badName(r, L.flowType)])],
    ['register.slot_kind', () => (reg.slot_kind = r.pick([0, 3, 99, -1]) as pb.SlotKind)],
    ['register.task_limit', () => (reg.task_limit = r.pick([1_000_001, 2 ** 32 - 1, -1]))],
    ['register.sdk_name', () => (reg.sdk_name = 'n'.repeat(r.pick([65, 1000])))],
    ['register.sdk_version', () => (reg.sdk_version = '1'.repeat(r.pick([65, 1000])))],
    ['register.protocol_version', () => (reg.protocol_version = r.pick([0, 1, PROTOCOL_VERSION + 1, 2 ** 32 - 1]))],
  ];
  if (r.int(6) === 0) {
    const frame = r.pick<pb.IWorkerFrame>([{ pong: { sent_at_ms: 1 } }, { heartbeat: { task_token: 'x' } }, {}, { step_result: { task_token: 'x', output: Buffer.alloc(0) } }]);
    return { field: 'register', bytes: pb.WorkerFrame.encode(frame).finish(), code: Status.FAILED_PRECONDITION };
  }
  const [field, mutate] = r.pick(muts);
  mutate();
  const code = field === 'register.protocol_version' ? Status.FAILED_PRECONDITION : undefined;
  return { field, code, bytes: withBadUtf8(pb.WorkerFrame.encode({ register: reg }).finish()) };
}

/**
 * Frames for the stream that holds the running attempt, each with the verdict its
 * ack must carry (undefined: no answer) and the field the ack's error names first.
 */
function workerFrameCases(token: string) {
  const [p, id, attempt, nonce] = token.split('.') as [string, string, string, string];
  const otherPartition = String((Number(p) + 1) % 8);
  const badTokens = [
    '', 'garbage', token.slice(0, -1), `${token}0`, `${otherPartition}.${id.replace(/^\d+/, otherPartition)}.${attempt}.${nonce}`,
    `${p}.${id}.${Number(attempt) + 1}.${nonce}`, `${p}.${id}.${attempt}.${'0'.repeat(16)}`, `${p}.${id}.${attempt}.${nonce.toUpperCase()}`,
    `0${token}`, `${token}\u0000`, token.replace(/\./g, ':'),
  ];
  type FrameCase = { field: string; bytes: Uint8Array; verdict?: pb.ResultVerdict };
  const enc = (f: pb.IWorkerFrame) => withBadUtf8(pb.WorkerFrame.encode(f).finish());
  const cases: ((r: Rng) => FrameCase)[] = [
    (r) => ({ field: 'step_result.task_token', verdict: pb.ResultVerdict.REFUSED_STALE, bytes: enc({ step_result: { task_token: r.pick(badTokens), output: Buffer.from('x') } }) }),
    (r) => ({ field: 'step_result.task_token', verdict: pb.ResultVerdict.REFUSED_STALE, bytes: enc({ step_result: { task_token: r.pick(badTokens), failure: { message: 'm' } } }) }),
    () => ({ field: 'step_result.result', verdict: pb.ResultVerdict.REFUSED_INVALID, bytes: enc({ step_result: { task_token: token } }) }),
    () => ({ field: 'step_result.failure.message', verdict: pb.ResultVerdict.REFUSED_INVALID, bytes: enc({ step_result: { task_token: token, failure: { message: 'm'.repeat(4097) } } }) }),
    () => ({ field: 'step_result.failure.message', verdict: pb.ResultVerdict.REFUSED_INVALID, bytes: enc({ step_result: { task_token: token, failure: { message: `x${MARK}` } } }) }),
    () => ({ field: 'step_result.failure.type', verdict: pb.ResultVerdict.REFUSED_INVALID, bytes: enc({ step_result: { task_token: token, failure: { type: 't'.repeat(257) } } }) }),
    () => ({ field: 'step_result.failure.type', verdict: pb.ResultVerdict.REFUSED_INVALID, bytes: enc({ step_result: { task_token: token, failure: { type: MARK } } }) }),
    (r) => ({ field: 'step_result.failure.retry_after_ms', verdict: pb.ResultVerdict.REFUSED_INVALID, bytes: enc({ step_result: { task_token: token, failure: { message: 'm', retry_after_ms: r.pick([-1, 2 ** 53 + 2, 365 * 86_400_000 + 1]) } } }) }),
    (r) => ({ field: 'decline.reason', verdict: pb.ResultVerdict.REFUSED_INVALID, bytes: enc({ decline: { task_token: token, reason: r.pick([0, 3, 99, -1]) as pb.DeclineReason } }) }),
    (r) => ({ field: 'decline.task_token', verdict: pb.ResultVerdict.REFUSED_STALE, bytes: enc({ decline: { task_token: r.pick(badTokens), reason: pb.DeclineReason.UNKNOWN_TYPE } }) }),
    (r) => ({ field: 'rpc_result.task_token', verdict: pb.ResultVerdict.REFUSED_STALE, bytes: enc({ rpc_result: { task_token: r.pick([token, ...badTokens]), output: Buffer.from('x') } }) }),
    (r) => ({ field: 'heartbeat.task_token', bytes: enc({ heartbeat: { task_token: r.pick(badTokens), details: Buffer.from('d') } }) }),
    () => ({ field: 'step_result.task_token', verdict: pb.ResultVerdict.REFUSED_INVALID, bytes: enc({ step_result: { task_token: `${token}${MARK}`, output: Buffer.from('x') } }) }),
  ];
  return cases;
}

/** A Connect stream of raw frames, read frame by frame, pings skipped. */
function openRawSlot(worker: Record<string, Unary>, flowType: string, kind = pb.SlotKind.STEP_AND_RPC) {
  const out: Uint8Array[] = [pb.WorkerFrame.encode({ register: {
    protocol_version: PROTOCOL_VERSION, tenant: 'acme', app_worker_id: 'wh', flow_types: [flowType], slot_kind: kind, task_limit: 1,
  } }).finish()];
  let wake: (() => void) | undefined;
  let closed = false;
  const abort = new AbortController();
  const frames: pb.ServerFrame[] = [];
  let waiter: (() => void) | undefined;
  let ended: Error | undefined;
  void (async () => {
    try {
      const stream = (worker.connect as unknown as (req: AsyncIterable<Uint8Array>, o: object) => AsyncIterable<pb.ServerFrame>)((async function* () {
        for (;;) {
          while (out.length > 0) yield out.shift()!;
          if (closed) return;
          await new Promise<void>((res) => (wake = res));
        }
      })(), { signal: abort.signal });
      for await (const f of stream) {
        frames.push(f);
        waiter?.();
      }
      ended = new Error('stream ended');
    } catch (err) {
      ended = err as Error;
    }
    waiter?.();
  })();
  return {
    send(b: Uint8Array) {
      out.push(b);
      wake?.();
    },
    async next(kind: string, timeoutMs = 3000): Promise<pb.ServerFrame> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const i = frames.findIndex((f) => f.frame === kind);
        const other = frames.findIndex((f) => f.frame !== 'ping' && f.frame !== kind);
        if (other >= 0 && (i < 0 || other < i)) throw new Error(`got ${frames[other]!.frame} (${JSON.stringify(frames[other]!.toJSON()).slice(0, 200)}) before ${kind}`);
        if (i >= 0) return frames.splice(0, i + 1).pop()!;
        if (ended) throw new Error(`stream ended before ${kind}: ${ended.message}`);
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`no ${kind} within ${timeoutMs} ms`);
        await new Promise<void>((res) => {
          const tm = setTimeout(res, left);
          waiter = () => {
            clearTimeout(tm);
            res();
          };
        });
      }
    },
    close() {
      closed = true;
      wake?.();
      abort.abort();
    },
  };
}

/** Sends `frames` on a bidi call and collects what comes back (at most `max` frames) or the error, within 2 s. */
async function collect(
  call: (req: AsyncIterable<Uint8Array>, o: object) => AsyncIterable<unknown>, frames: Uint8Array[], max = 1,
): Promise<{ frames: unknown[]; error?: unknown }> {
  const got: unknown[] = [];
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), 2000);
  try {
    for await (const f of call((async function* () {
      for (const f of frames) yield f;
      await new Promise((res) => setTimeout(res, 2500));
    })(), { signal: ac.signal })) {
      got.push(f);
      if (got.length >= max) break;
    }
    return { frames: got };
  } catch (err) {
    return { frames: got, error: (err as Error).name === 'AbortError' ? new Error('no answer within 2 s') : err };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Every key of the prefix with its type and whole value (hash fields, set and sorted-set members with
 * scores, stream entries and consumer groups with their pending entries); a TTL as present or not.
 * One script call reads it all, so the state is of one moment. Membership heartbeats and leases move
 * by themselves and are left out, and so are the names of queues that hold nothing, which the backlog
 * count prunes in its own time.
 */
const SNAPSHOT_LUA = `
local out = {}
local keys = redis.call('KEYS', ARGV[1] .. ':*')
table.sort(keys)
for _, k in ipairs(keys) do
  local skip = k:sub(-8) == ':members' or k:find(':node:', 1, true) or k:sub(-6) == ':lease'
  if not skip then
    local t = redis.call('TYPE', k).ok
    local v
    if t == 'string' then v = { redis.call('GET', k) }
    elseif t == 'hash' then
      local h = redis.call('HGETALL', k)
      v = {}
      for i = 1, #h, 2 do v[#v + 1] = h[i] .. '=' .. h[i + 1] end
      table.sort(v)
    elseif t == 'set' then
      v = redis.call('SMEMBERS', k)
      if k:sub(-7) == ':queues' then
        local base = k:sub(1, -7)
        local kept = {}
        for _, q in ipairs(v) do if redis.call('EXISTS', base .. 'q:' .. q) == 1 then kept[#kept + 1] = q end end
        v = kept
        if #v == 0 then skip = true end
      end
      table.sort(v)
    elseif t == 'zset' then v = redis.call('ZRANGE', k, 0, -1, 'WITHSCORES')
    elseif t == 'list' then v = redis.call('LRANGE', k, 0, -1)
    elseif t == 'stream' then
      v = { redis.call('XRANGE', k, '-', '+') }
      for _, g in ipairs(redis.call('XINFO', 'GROUPS', k)) do
        v[#v + 1] = { g[2], g[6], g[8] }
        for _, e in ipairs(redis.call('XPENDING', k, g[2], '-', '+', 1000)) do v[#v + 1] = { e[1], e[2], e[4] } end
      end
    end
    if not skip then out[#out + 1] = { k, t, redis.call('PTTL', k) >= 0 and 'ttl' or '', v } end
  end
end
return out`;

async function snapshot(prefix: string): Promise<string[]> {
  const rows = (await redis.command('EVAL', SNAPSHOT_LUA, 0, prefix)) as unknown[];
  return rows.map((row) => JSON.stringify(row));
}

function diff(a: string[], b: string[]): string[] {
  const sa = new Set(a);
  const sb = new Set(b);
  return [...a.filter((x) => !sb.has(x)).map((x) => `- ${x}`), ...b.filter((x) => !sa.has(x)).map((x) => `+ ${x}`)];
}
