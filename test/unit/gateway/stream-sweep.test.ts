/**
 * StreamSweep (DESIGN §5): an idle stream is pinged so that no idle gap exceeds
 * matching.pingInterval; a busy stream silent past matching.busyStreamSilence is
 * lost, but only while it holds a task (a slot bound while its start is on its way
 * to Redis has nothing for the worker to answer about), and never a stream of an
 * older SDK that sends nothing while a task runs. A draining stream (told to
 * reconnect) is not pinged.
 */
import { Slot, type SlotState } from '../../../src/gateway/slot';
import { StreamSweep } from '../../../src/gateway/stream-sweep';
import { silentLogger } from '../../../src/util/logger';
import type { pb } from '../../../src/wire';

const PING = 1_000;
const SILENCE = 4_000;
const clock = { now: () => Date.now() };

function slot(id: string, state: SlotState, quietWhileBusy = false): Slot {
  const s = new Slot(id, {
    tenant: 'acme', appWorkerId: id, flowTypes: ['order'], kind: 'STEP_AND_RPC', taskLimit: 1, sdk: 'test',
    acceptsTaskAfterAck: false, acceptsTaskInAck: false, quietWhileBusy,
  });
  s.state = state;
  s.lastSentAt = s.lastHeardAt = Date.now();
  return s;
}

const held = { partition: 0, taskId: 't', attempt: 1, nonce: 'n', queue: 'q', token: 'tok', delivered: true };

/** Ping times written to the stream, by reading them back from the slot's channel. */
async function pings(s: Slot): Promise<number[]> {
  s.out.close();
  const out: number[] = [];
  for await (const f of s.out as AsyncIterable<pb.IServerFrame>) if (f.ping) out.push(Number(f.ping.sent_at_ms));
  return out;
}

let sweep: StreamSweep | undefined;
beforeEach(() => jest.useFakeTimers({ now: 10_000 }));
afterEach(() => {
  sweep?.stop();
  jest.useRealTimers();
});

test('an idle stream gets a Ping before its gap reaches matching.pingInterval; a draining one gets none', async () => {
  const idle = slot('idle', 'idle');
  const draining = slot('draining', 'draining');
  // A frame went out between two sweeps: the next Ping is still due within the interval of it.
  idle.lastSentAt = 10_001;
  sweep = new StreamSweep({ pingIntervalMs: PING, busyStreamSilenceMs: 0 }, new Map([['idle', idle], ['draining', draining]]), async () => {}, clock, silentLogger);
  jest.advanceTimersByTime(5 * PING);
  const sent = await pings(idle);
  expect(sent.length).toBeGreaterThanOrEqual(5);
  const gaps = sent.map((t, i) => t - (i === 0 ? 10_001 : sent[i - 1]!));
  expect(Math.max(...gaps)).toBeLessThanOrEqual(PING);
  expect(await pings(draining)).toEqual([]);
});

test('a busy stream silent past matching.busyStreamSilence is lost only while it holds a task, and never one of an older SDK', () => {
  const holding = slot('holding', 'busy');
  holding.attempt = { ...held };
  const starting = slot('starting', 'busy');
  const older = slot('older', 'busy', true);
  older.attempt = { ...held };
  const lost: string[] = [];
  sweep = new StreamSweep({ pingIntervalMs: 60_000, busyStreamSilenceMs: SILENCE },
    new Map([['holding', holding], ['starting', starting], ['older', older]]),
    async (s) => void lost.push(s.id), clock, silentLogger);
  jest.advanceTimersByTime(SILENCE - 1_000);
  expect(lost).toEqual([]);
  jest.advanceTimersByTime(2_000);
  expect([...new Set(lost)]).toEqual(['holding']);
});

test('a busy stream is lost on the sweep at which its silence reaches matching.busyStreamSilence, and within a quarter of it past', () => {
  const atOnce = slot('at-once', 'busy');
  atOnce.attempt = { ...held };
  const between = slot('between', 'busy');
  between.attempt = { ...held };
  between.lastHeardAt = between.lastSentAt = 10_500; // heard between two sweeps
  const lost: string[] = [];
  sweep = new StreamSweep({ pingIntervalMs: 60_000, busyStreamSilenceMs: SILENCE },
    new Map([['at-once', atOnce], ['between', between]]), async (s) => void lost.push(s.id), clock, silentLogger);
  jest.advanceTimersByTime(SILENCE);
  expect([...new Set(lost)]).toEqual(['at-once']);
  jest.advanceTimersByTime(SILENCE / 4);
  expect([...new Set(lost)]).toEqual(['at-once', 'between']);
});

test('silence counts from the last frame either way, covers a stream running an RPC, and with busyStreamSilence 0 loses none', () => {
  const rpc = slot('rpc', 'busy');
  rpc.rpc = {} as Slot['rpc'];
  const sentTo = slot('sent-to', 'busy');
  sentTo.attempt = { ...held };
  sentTo.lastHeardAt = 10_000 - SILENCE; // quiet long, but a frame went to it just now
  const lost: string[] = [];
  sweep = new StreamSweep({ pingIntervalMs: 60_000, busyStreamSilenceMs: SILENCE },
    new Map([['rpc', rpc], ['sent-to', sentTo]]), async (s) => void lost.push(s.id), clock, silentLogger);
  jest.advanceTimersByTime(SILENCE - 1_000);
  expect(lost).toEqual([]);
  jest.advanceTimersByTime(1_000);
  expect(new Set(lost)).toEqual(new Set(['rpc', 'sent-to']));
  sweep.stop();

  const never = slot('never', 'busy');
  never.attempt = { ...held };
  const none: string[] = [];
  sweep = new StreamSweep({ pingIntervalMs: 60_000, busyStreamSilenceMs: 0 },
    new Map([['never', never]]), async (s) => void none.push(s.id), clock, silentLogger);
  jest.advanceTimersByTime(120_000);
  expect(none).toEqual([]);
});

test('a busy stream is never pinged, however long since its last frame: its worker Pongs on its own', async () => {
  const busy = slot('busy', 'busy');
  busy.attempt = { ...held };
  sweep = new StreamSweep({ pingIntervalMs: PING, busyStreamSilenceMs: 0 }, new Map([['busy', busy]]), async () => {}, clock, silentLogger);
  jest.advanceTimersByTime(5 * PING);
  expect(await pings(busy)).toEqual([]);
});

test('a stopped sweep pings no stream and loses none', async () => {
  const idle = slot('idle', 'idle');
  const quiet = slot('quiet', 'busy');
  quiet.attempt = { ...held };
  const lost: string[] = [];
  sweep = new StreamSweep({ pingIntervalMs: PING, busyStreamSilenceMs: SILENCE },
    new Map([['idle', idle], ['quiet', quiet]]), async (s) => void lost.push(s.id), clock, silentLogger);
  sweep.stop();
  jest.advanceTimersByTime(2 * SILENCE);
  expect(await pings(idle)).toEqual([]);
  expect(lost).toEqual([]);
});
