/**
 * Issue 7: a bounded, seeded fuzz of every method of every public surface —
 * MatchingService, WorkerTaskService.Connect (first frames and frames after a
 * Register), ExternalTaskService, OperatorService, the HTTP/JSON fetch routes
 * — with malformed and random protobuf frames (raw bytes through
 * identity-serializer clients), structurally valid messages full of hostile
 * values (unicode, control characters, over-long names, negative and huge
 * durations, oversized payloads), random JSON bodies, broken HTTP, and random
 * bearer tokens. Every call must get a clear answer (never INTERNAL/UNKNOWN,
 * never an 'unexpected error' log line), the node must stay up, and Redis
 * must be unchanged afterwards.
 *
 * The value pools are hostile by construction (only id-shaped strings are
 * valid names, and a write needs five fields to line up), so no case is a
 * legitimate write: "Redis unchanged" is then the exact expectation.
 * ZD_FUZZ_SEED=<n> reruns one seed; ZD_FUZZ_CASES scales the run.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import protobuf from 'protobufjs/minimal';
import { ClientError, Metadata, Status, createChannel, createClient } from 'nice-grpc';
import { HealthDefinition } from 'nice-grpc-server-health';
import { ALL_SERVICES } from '../../src/wire';
import { captureLogs } from '../helpers/logs';
import { startTestNode } from '../helpers/node';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { prng } from '../helpers/prng';
import { keySnapshot } from '../helpers/key-snapshot';

const redis = useEmbeddedRedis();
const SEED = Number(process.env.ZD_FUZZ_SEED ?? 0x5eed7);
const CASES = Number(process.env.ZD_FUZZ_CASES ?? 3000);

/** The seeded source, with random bytes. */
function fuzzRng(seed: number) {
  const { next, int, pick } = prng(seed);
  const bytes = (n: number): Buffer => {
    // big buffers repeat a random block: the PRNG would otherwise dominate the run
    if (n > 512) return Buffer.alloc(n, bytes(64));
    const b = Buffer.allocUnsafe(n);
    for (let i = 0; i < n; i++) b[i] = int(256);
    return b;
  };
  return { next, int, pick, bytes };
}
type Rng = ReturnType<typeof fuzzRng>;

const TOKENS = { worker: 'fuzz-worker-token-0123456789', client: 'fuzz-client-token-0123456789' };
const sha = (t: string) => createHash('sha256').update(t).digest('hex');

/** Strings: none is a valid tenant name (control characters, unicode, separators, over-long, empty). */
function hostileString(r: Rng): string {
  switch (r.int(12)) {
    case 0: return '';
    case 1: return `acme${r.pick(['\u0000', '\n', '\u007f', '\u2028', '\t', '\r\n'])}`;
    case 2: return r.pick(['ténant', 'a:b', '{0}', 'a b', '😀', '\u202eacme', 'zd:{1}:t', '..', '-x', '*', 'ac/me']);
    case 3: return 'x'.repeat(257 + r.int(3000));
    case 4: return r.bytes(r.int(64)).toString('latin1');
    case 5: return r.bytes(r.int(64)).toString('utf8');
    case 6: return `${r.int(100)}-${'a'.repeat(24)}`; // looks like a task id (unknown)
    case 7: return `${r.int(8)}-${r.int(1e9)}-${r.int(9)}`; // looks like an outcome id
    case 8: return '%' + r.bytes(4).toString('hex'); // broken percent-encoding in paths
    case 9: return String.fromCharCode(...Array.from({ length: 1 + r.int(20) }, () => r.int(0x10ffff) % 0xd7ff));
    case 10: return `{${r.int(64)}}${'\u0001'}`;
    default: return JSON.stringify({ nested: r.bytes(8).toString('base64') });
  }
}

/** Durations and counts: negative, zero, huge, beyond 2^53. */
function hostileNumber(r: Rng): number | bigint {
  return r.pick<number | bigint>([-1, -1e15, 0, 1, 2 ** 31, 2 ** 32 + 1, 2 ** 53 + 2, -(2n ** 63n), 2n ** 64n - 1n, 9e15, 400 * 86_400_000]);
}

/** A structurally valid protobuf message with random fields (1..12) of every wire type and hostile values. */
function randomMessage(r: Rng, depth = 0): Uint8Array {
  const w = protobuf.Writer.create();
  const fields = r.int(7);
  for (let i = 0; i < fields; i++) {
    const field = 1 + r.int(12);
    switch (r.int(depth < 2 ? 6 : 4)) {
      case 0: {
        const n = hostileNumber(r);
        w.uint32((field << 3) | 0);
        if (typeof n === 'bigint') w.uint64(protobuf.util.LongBits.fromNumber(Number(n)).toLong(true) as never);
        else w.int64(n);
        break;
      }
      case 1: w.uint32((field << 3) | 2).string(hostileString(r)); break;
      case 2: w.uint32((field << 3) | 2).bytes(r.bytes(r.pick([0, 1, 100, 5000, 70_000]))); break;
      case 3: w.uint32((field << 3) | 1).fixed64(r.int(1e9)); break;
      default: w.uint32((field << 3) | 2).bytes(randomMessage(r, depth + 1));
    }
  }
  return w.finish();
}

/** Random bytes, truncated varints, bad wire types, huge length prefixes, or an oversized frame. */
function randomFrame(r: Rng): Uint8Array {
  switch (r.int(6)) {
    case 0: return r.bytes(r.int(200));
    case 1: return Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01]); // length far past the end
    case 2: return Buffer.from([0x0f, 0x01]); // wire type 7
    case 3: return r.bytes(80_000 + r.int(40_000)); // over grpc.max_receive_message_length
    default: return randomMessage(r);
  }
}

function randomJson(r: Rng, depth = 0): unknown {
  switch (r.int(depth < 3 ? 9 : 6)) {
    case 0: return null;
    case 1: return r.next() < 0.5;
    case 2: { const n = hostileNumber(r); return typeof n === 'bigint' ? Number(n) : n; }
    case 3: return hostileString(r);
    case 4: return r.bytes(r.int(40)).toString('base64');
    case 5: return r.pick([1.5, -0, 1e308, '12345678901234567890', '']);
    case 6: return Array.from({ length: r.int(4) }, () => randomJson(r, depth + 1));
    default: {
      const keys = ['workerId', 'topics', 'maxTasks', 'lockDurationMs', 'waitMs', 'result', 'idempotencyKey', 'failure', 'retries',
        'retryTimeoutMs', 'tenant', 'flowType', 'stepType', 'message', 'type', '__proto__', 'constructor'];
      const o: Record<string, unknown> = {};
      for (let i = r.int(6); i > 0; i--) o[r.pick(keys)] = randomJson(r, depth + 1);
      return o;
    }
  }
}

/** Every key of this test's prefix with its type and size, the sets of queues included (nothing here is enqueued). */
const snapshot = (prefix: string) => keySnapshot(redis, prefix, { withQueues: true });

type Unary = { path: string; service: string };

it(`answers ${CASES} hostile calls on every surface with clear errors, stays up, and leaves Redis unchanged (seed ${SEED})`, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zd-fuzz-'));
  fs.writeFileSync(path.join(dir, 'w.yaml'), `tokens: [{ sha256: ${sha(TOKENS.worker)}, tenants: ["*"] }]\n`);
  fs.writeFileSync(path.join(dir, 'c.yaml'), `tokens: [{ sha256: ${sha(TOKENS.client)}, tenants: ["*"], operator: true }]\n`);
  const prefix = uniquePrefix('fuzz');
  const { logger, lines: logs } = captureLogs('info');
  const { node, channel } = await startTestNode(redis.url, prefix, {
    'cluster.partitions': 4, 'drain.timeout': '1s',
    'auth.enabled': true, 'auth.workerTokensFile': path.join(dir, 'w.yaml'), 'auth.clientTokensFile': path.join(dir, 'c.yaml'),
    'limits.maxPayloadBytes': 4096, 'limits.maxWait': '200ms', 'fetch.maxWait': '300ms', 'fetch.wait': '100ms',
    'matching.dispatchWait': '200ms', 'matching.stickyWait': '100ms', 'limits.httpHeadersTimeout': '2s',
  }, { logger, channelOptions: { 'grpc.max_send_message_length': 1 << 20 } });
  const r = fuzzRng(SEED);
  const failures: string[] = [];
  const seenStatus = new Map<string, number>();
  try {
    // let the node settle (leases acquired) before the "before" snapshot
    await new Promise((res) => setTimeout(res, 500));
    const before = await snapshot(prefix);

    // one identity-serializer client per public method
    const methods: (Unary & { def: object })[] = [];
    for (const [service, def] of Object.entries(ALL_SERVICES)) {
      if (service === 'zdmatch.v1.PeerService') continue; // internal listener, not a public surface
      for (const [name, m] of Object.entries(def as Record<string, { path: string; requestStream: boolean }>)) {
        methods.push({ path: m.path, service, def: { [name]: { ...m, requestSerialize: (b: Uint8Array) => b } } });
      }
    }
    const clients = methods.map((m) => ({ m, client: createClient(m.def as never, channel) as Record<string, (...a: unknown[]) => unknown> }));
    const tokenFor = (service: string) => (service.endsWith('WorkerTaskService') || service.endsWith('ExternalTaskService') ? TOKENS.worker : TOKENS.client);

    const record = (label: string, err: unknown) => {
      if (err === undefined) {
        seenStatus.set('OK', (seenStatus.get('OK') ?? 0) + 1);
        return;
      }
      if (!(err instanceof ClientError)) {
        if ((err as Error)?.name === 'AbortError') return;
        failures.push(`${label}: not a gRPC status: ${String(err)}`);
        return;
      }
      seenStatus.set(Status[err.code], (seenStatus.get(Status[err.code]) ?? 0) + 1);
      const clear = err.details.startsWith('ZD_') || (err.code === Status.RESOURCE_EXHAUSTED && /larger than max/.test(err.details));
      if (err.code === Status.INTERNAL || err.code === Status.UNKNOWN || !clear) failures.push(`${label}: ${Status[err.code]} ${err.details.slice(0, 200)}`);
    };

    const unaryCase = async (i: number) => {
      const { m, client } = r.pick(clients);
      const fn = Object.values(client)[0]!;
      const frame = randomFrame(r);
      const auth = r.int(10);
      const metadata = auth === 0 ? Metadata() : Metadata({ authorization: auth === 1 ? `Bearer ${hostileString(r).replace(/[^\x21-\x7e]/g, '')}x` : `Bearer ${tokenFor(m.service)}` });
      if (m.path.endsWith('/Connect') || m.path.endsWith('/EnqueueStream')) {
        // a stream. Connect: a random first frame, or a Register then random frames.
        // EnqueueStream: random frames, or requests whose Steps are random.
        const more = () => Array.from({ length: 1 + r.int(5) }, () => randomFrame(r));
        const frames: Uint8Array[] = m.path.endsWith('/Connect')
          ? (r.int(2) === 0 ? [frame] : [registerBytes(r), ...more()])
          : (r.int(2) === 0 ? [frame, ...more()] : more().map((f) => enqueueRequestBytes(r, f)));
        const ac = new AbortController();
        const timer = setTimeout(() => ac.abort(), 300);
        try {
          const it = (fn as (req: AsyncIterable<Uint8Array>, o: object) => AsyncIterable<unknown>)((async function* () {
            for (const f of frames) yield f;
            await new Promise((res) => setTimeout(res, 150));
          })(), { metadata, signal: ac.signal });
          for await (const res of it) {
            // an enqueue request that failed is answered on the stream, with a clear status of its own
            const e = (res as { error?: { code: number; message: string } | null }).error;
            if (e && (e.code === Status.INTERNAL || e.code === Status.UNKNOWN || !e.message.startsWith('ZD_'))) {
              failures.push(`#${i} ${m.path} answer: ${Status[e.code]} ${e.message.slice(0, 200)}`);
            }
          }
          record(`#${i} ${m.path}`, undefined);
        } catch (err) {
          record(`#${i} ${m.path}`, err);
        } finally {
          clearTimeout(timer);
        }
        return;
      }
      // An oversized frame goes on a connection of its own: grpc-js refuses it, but the refused DATA
      // can hold the HTTP/2 flow-control window of the connection it came on (the sender's own problem).
      const big = frame.length > 70_000;
      const own = big ? createChannel(node.apiAddress) : undefined;
      const call = big ? (Object.values(createClient(m.def as never, own!) as Record<string, unknown>)[0] as typeof fn) : fn;
      const err = await (call as (req: Uint8Array, o: object) => Promise<unknown>)(frame, { metadata, signal: AbortSignal.timeout(5000) })
        .then(() => undefined, (e: unknown) => e);
      own?.close();
      record(`#${i} ${m.path} ${Buffer.from(frame.slice(0, 24)).toString('hex')}`, err);
    };

    const httpCase = async (i: number) => {
      const routes = ['fetch-and-lock', 'x/complete', 'x/failure', 'x/extend-lock', 'x/unlock', 'x/nope', '', '../../etc'];
      let route = r.pick(routes);
      if (route.startsWith('x/')) route = `${encodeURIComponent(hostileString(r).slice(0, 100)) || 'x'}/${route.slice(2)}`;
      if (r.int(8) === 0) route = `${hostileString(r).slice(0, 20).replace(/[^\x21-\x7e]/g, '%')}/${route}`;
      const method = r.int(6) === 0 ? r.pick(['GET', 'PUT', 'DELETE', 'PATCH']) : 'POST';
      const kind = r.int(10);
      const body = kind === 0 ? r.bytes(r.int(300)) : kind === 1 ? Buffer.alloc(200_000, 0x61) : kind === 2 ? Buffer.from('{"workerId": "w", ') : Buffer.from(JSON.stringify(randomJson(r)));
      const headers: Record<string, string> = { 'content-type': r.pick(['application/json', 'text/plain', '']) };
      const auth = r.int(8);
      if (auth > 1) headers.authorization = `Bearer ${TOKENS.worker}`;
      else if (auth === 1) headers.authorization = r.pick(['Bearer', 'Basic abc', `Bearer ${TOKENS.client}`, 'bearer  x y']);
      try {
        const res = await fetch(`http://${node.httpAddress}/v1/external-tasks/${route}`, {
          method, headers, body: method === 'GET' ? undefined : body, signal: AbortSignal.timeout(5000),
        });
        const text = await res.text();
        seenStatus.set(`HTTP ${res.status}`, (seenStatus.get(`HTTP ${res.status}`) ?? 0) + 1);
        let code = '';
        try {
          code = (JSON.parse(text) as { code?: string }).code ?? '';
        } catch { /* not JSON */ }
        if (res.status >= 500 || (res.status >= 400 && !code.startsWith('ZD_'))) failures.push(`#${i} HTTP ${method} ${route}: ${res.status} ${text.slice(0, 200)}`);
      } catch (err) {
        // the server may close a connection after refusing an oversized body mid-upload; that is an answer too
        if (kind !== 1) failures.push(`#${i} HTTP ${method} ${route}: ${String(err)}`);
      }
    };

    const rawHttpCase = async (i: number) => {
      // bytes that are not HTTP at all, or headers that never end
      const payload = r.pick([
        r.bytes(200), Buffer.from('POST /v1/external-tasks/fetch-and-lock HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n'),
        Buffer.from(`GET / HTTP/1.1\r\nX: ${'a'.repeat(20_000)}\r\n\r\n`), Buffer.from('GET /\u0000 HTTP/9.9\r\n\r\n'),
      ]);
      const [host, port] = node.httpAddress.split(':');
      const answer = await new Promise<string>((resolve) => {
        const s = net.connect(Number(port), host!, () => s.end(payload));
        let got = '';
        s.on('data', (d) => (got += d.toString('latin1')));
        s.on('close', () => resolve(got));
        s.on('error', () => resolve(got));
        s.setTimeout(3000, () => s.destroy());
      });
      const status = /^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1];
      if (status && (Number(status) >= 500 || !/"code":"ZD_/.test(answer))) failures.push(`#${i} raw HTTP: ${answer.slice(0, 200)}`);
    };

    const registerBytes = (rr: Rng) => {
      // a Register frame with hostile values: field 1 = register (see worker.proto)
      const inner = protobuf.Writer.create()
        .uint32((1 << 3) | 0).uint32(4)
        .uint32((2 << 3) | 2).string(rr.int(3) === 0 ? 'acme' : hostileString(rr))
        .uint32((3 << 3) | 2).string(hostileString(rr))
        .uint32((4 << 3) | 2).string(rr.int(2) === 0 ? 'order' : hostileString(rr))
        .finish();
      return protobuf.Writer.create().uint32((1 << 3) | 2).bytes(inner).finish();
    };

    /** An EnqueueStreamRequest: a request id, then `step` as its one Step (field 2, see matching.proto). */
    const enqueueRequestBytes = (rr: Rng, step: Uint8Array) =>
      protobuf.Writer.create().uint32((1 << 3) | 0).uint64(rr.int(1000)).uint32((2 << 3) | 2).bytes(step).finish();

    const jobs: (() => Promise<void>)[] = [];
    const timing = new Map<string, number>();
    const timed = (name: string, f: () => Promise<void>) => async () => {
      const t0 = Date.now();
      await f();
      timing.set(name, (timing.get(name) ?? 0) + Date.now() - t0);
    };
    for (let i = 0; i < CASES; i++) {
      const k = r.int(10);
      jobs.push(k < 7 ? timed('grpc', () => unaryCase(i)) : k < 9 ? timed('http', () => httpCase(i)) : timed('raw', () => rawHttpCase(i)));
    }
    // bounded parallelism keeps the run short without starving the node
    let next = 0;
    await Promise.all(Array.from({ length: 24 }, async () => {
      while (next < jobs.length) await jobs[next++]!();
    }));

    if (process.env.ZD_FUZZ_TIMING) console.log(JSON.stringify([...timing]), JSON.stringify([...seenStatus]), logs.length);
    // the node is up: health answers, and a valid read works
    const health = await createClient(HealthDefinition, channel).check({ service: '' });
    expect(health.status).toBe(1);
    expect(node.state).toBe('running');
    const unexpected = logs.filter((l) => /unexpected error/.test(String(l.msg)));
    for (const l of unexpected) failures.push(`log: ${String(l.msg)} ${String(l.method ?? l.url)} ${String(l.err).slice(0, 300)}`);
    expect(failures.slice(0, 20)).toEqual([]);
    expect(await snapshot(prefix)).toEqual(before);
    // the run covered the ground it claims to
    expect(seenStatus.get('INVALID_ARGUMENT')).toBeGreaterThan(0);
    expect(seenStatus.get('UNAUTHENTICATED')).toBeGreaterThan(0);
    expect(seenStatus.get('RESOURCE_EXHAUSTED')).toBeGreaterThan(0);
    expect(seenStatus.get('HTTP 400')).toBeGreaterThan(0);
  } finally {
    channel.close();
    await node.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);
