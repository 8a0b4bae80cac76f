/**
 * RPCs waiting at a node for a slot (DESIGN §4): a peer's idle slots take the
 * oldest waiting calls of the flow type, no more than it has slots for, and in
 * order; a call a peer sent here is never sent on to a third node.
 */
import { Declines } from '../../../src/gateway/declines';
import { IdleSlots } from '../../../src/gateway/idle-slots';
import { RpcDispatch } from '../../../src/gateway/rpc-dispatch';
import { RpcWaiters } from '../../../src/gateway/rpc-waiters';
import type { RpcCall, Slot } from '../../../src/gateway/slot';
import type { Metrics } from '../../../src/metrics/registry';

const call = (name: string, over: Partial<RpcCall> = {}): RpcCall => ({
  token: name, tenant: 'acme', flowId: `flow-${name}`, flowType: 'order', rpcName: 'status', input: Buffer.alloc(0),
  sticky: '', stickyUntil: 0, arrivedAt: 0, deadline: 0, runDeadline: 0, signal: new AbortController().signal,
  settle: () => undefined, settled: false, ...over,
});
const KEY = 'acme\0order';

describe('RpcWaiters.moveOut', () => {
  it('moves at most as many calls as asked, oldest first', () => {
    const w = new RpcWaiters();
    const calls = ['a', 'b', 'c'].map((n) => call(n));
    for (const c of calls) w.add(KEY, c);
    const moved: string[] = [];
    expect(w.moveOut(KEY, 2, () => true, (c) => moved.push(c.token) > 0)).toBe(2);
    expect(moved).toEqual(['a', 'b']);
    expect(w.size).toBe(1);
    expect(w.has(calls[2]!)).toBe(true);
  });

  it('stops at the first call the peer does not take: a younger one never goes ahead of it', () => {
    const w = new RpcWaiters();
    const calls = ['a', 'b'].map((n) => call(n));
    for (const c of calls) w.add(KEY, c);
    const offered: string[] = [];
    expect(w.moveOut(KEY, 5, () => true, (c) => { offered.push(c.token); return false; })).toBe(0);
    expect(offered).toEqual(['a']);
    expect(w.size).toBe(2);
  });

  it('passes over settled and ineligible calls without stopping', () => {
    const w = new RpcWaiters();
    const calls = [call('a', { settled: true }), call('b', { sticky: 'w1' }), call('c')];
    for (const c of calls) w.add(KEY, c);
    const moved: string[] = [];
    expect(w.moveOut(KEY, 5, (c) => !c.sticky, (c) => moved.push(c.token) > 0)).toBe(1);
    expect(moved).toEqual(['c']);
  });
});

describe('RpcDispatch', () => {
  let now = 1_000_000;
  const clock = { now: () => now };
  beforeEach(() => { now = 1_000_000; });
  const metrics = { dispatchLatency: { observe: () => undefined } } as unknown as Metrics;
  const dispatch = () => {
    const declines = new Declines(100);
    const idle = new IdleSlots(declines);
    const rpc = new RpcDispatch(
      { stickyWaitMs: 60_000, maxPayloadBytes: 1024, tokenPrefix: 't' }, idle, declines,
      new Map<string, Set<Slot>>(), new Set(), { presence: () => 'busy' as const }, { capacityChanged: () => undefined }, metrics, clock,
    );
    return { d: rpc, idle };
  };
  const idleSlot = (appWorkerId: string, sent: unknown[]) => ({
    reg: { kind: 'RPC_ONLY', tenant: 'acme', flowTypes: ['order'], appWorkerId }, state: 'idle',
    send: (msg: unknown) => sent.push(msg) > 0,
  }) as unknown as Slot;

  it('answers UNAVAILABLE to a call a worker gave back unrun past its dispatch deadline, rather than run it on another slot', async () => {
    const { d, idle } = dispatch();
    const first = idleSlot('w1', []);
    idle.add(first);
    const answer = d.invokeRpc({
      tenant: 'acme', flowId: 'f1', flowType: 'order', rpcName: 'status', input: Buffer.alloc(0), sticky: '',
      deadline: now + 100, runDeadline: now + 30_000,
    }, new AbortController().signal);
    const call = first.rpc!;
    expect(call).toBeDefined();
    now += 150;
    const sentToSecond: unknown[] = [];
    idle.add(idleSlot('w2', sentToSecond));
    d.returnRpc(call);
    await expect(answer).resolves.toEqual({ kind: 'unavailable', reason: 'no worker took it within 100 ms' });
    expect(sentToSecond).toEqual([]);
    d.close();
  });

  it('sends a call waiting for its sticky worker to that worker\'s idle slots at a peer, but not one a peer sent here', () => {
    const { d } = dispatch();
    const signal = new AbortController().signal;
    const req = { tenant: 'acme', flowType: 'order', rpcName: 'status', input: Buffer.alloc(0), sticky: 'w1', deadline: clock.now() + 30_000, runDeadline: clock.now() + 30_000 };
    void d.invokeRpc({ ...req, flowId: 'from-peer', pinned: true }, signal);
    void d.invokeRpc({ ...req, flowId: 'from-caller' }, signal);
    expect(d.waiting).toBe(2);
    const run: string[] = [];
    expect(d.moveStickyRpcs('acme', 'w1', 5, (c) => run.push(c.flowId) > 0)).toBe(1);
    expect(run).toEqual(['from-caller']);
    expect(d.waiting).toBe(1);
    d.close();
  });
});

describe('RpcWaiters', () => {
  it('counts a call added twice once, and drain empties the count with the calls', () => {
    const w = new RpcWaiters();
    const a = call('a');
    w.add(KEY, a);
    w.add(KEY, a);
    w.add(KEY, call('b'));
    expect(w.size).toBe(2);
    expect(w.drain().map((c) => c.token)).toEqual(['a', 'b']);
    expect(w.size).toBe(0);
    expect(w.has(a)).toBe(false);
  });

  it('names the unsettled waiters sticky to a worker of that tenant only', () => {
    const w = new RpcWaiters();
    for (const c of [
      call('mine', { sticky: 'w1' }), call('settled', { sticky: 'w1', settled: true }),
      call('other-worker', { sticky: 'w2' }), call('other-tenant', { tenant: 'globex', sticky: 'w1' }),
    ]) w.add(`${c.tenant}\0${c.flowType}`, c);
    expect(w.stickyTo('acme', 'w1').map((c) => c.token)).toEqual(['mine']);
  });

  it('takes for a freed slot the oldest unsettled waiter it is eligible for, and that one leaves', () => {
    const w = new RpcWaiters();
    const calls = [call('settled', { settled: true }), call('sticky', { sticky: 'w2' }), call('c'), call('d')];
    for (const c of calls) w.add(KEY, c);
    const taken = w.takeFor('acme', ['refund', 'order'], (c) => !c.sticky);
    expect(taken?.token).toBe('c');
    expect(w.has(calls[2]!)).toBe(false);
    expect(w.size).toBe(3);
    expect(w.takeFor('acme', ['order'], (c) => !c.sticky)?.token).toBe('d');
    expect(w.takeFor('acme', ['order'], (c) => !c.sticky)).toBeUndefined();
  });
});
