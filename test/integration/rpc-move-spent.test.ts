/**
 * A waiting RPC moved to a peer carries what is left of its budgets: the peer
 * looks for a worker that long and lets it run that long. One whose time ran
 * out before the move (a late timer, a busy event loop) carried 0, which the
 * peer reads as "no budget given": its worker could run up to limits.maxWait,
 * unbounded by the sender, past what the caller asked for. Such a call ends
 * here as not taken in time, and nothing goes to the peer.
 */
import type { RpcCall, RpcSettlement } from '../../src/gateway/slot';
import { useEmbeddedRedis } from '../helpers/redis';
import { useNodePair } from '../helpers/node-pair';

const redis = useEmbeddedRedis();
const pair = useNodePair(redis, 'rpc-spent');

it('ends a waiting RPC whose time ran out as not taken, rather than moving it to a peer with no budget', () => {
  const { a } = pair;
  const sent: unknown[] = [];
  const mesh = a.node.mesh as unknown as { invokeRpc: (...args: unknown[]) => Promise<unknown> };
  const invoke = mesh.invokeRpc;
  mesh.invokeRpc = (...args: unknown[]) => {
    sent.push(args);
    return invoke.apply(a.node.mesh, args);
  };
  try {
    const now = Date.now();
    const settled: RpcSettlement[] = [];
    const call = {
      token: 'rpc.t', tenant: 'acme', flowId: 'f', flowType: 'order', rpcName: 'status', input: Buffer.from('q'),
      sticky: '', stickyUntil: 0, arrivedAt: now - 1000, deadline: now - 1, runDeadline: now - 1,
      signal: new AbortController().signal, settled: false,
      settle: (r: RpcSettlement) => settled.push(r),
    } as RpcCall;
    (a.node.routing as unknown as { runWaitingOn(peer: string, c: RpcCall, sticky: string): void }).runWaitingOn('n-b', call, '');
    expect(sent).toEqual([]);
    expect(settled).toEqual([{ kind: 'unavailable', reason: expect.stringMatching(/^no worker took it within \d+ ms$/) }]);
  } finally {
    mesh.invokeRpc = invoke;
  }
});
