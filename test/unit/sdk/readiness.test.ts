import { ClientError, Status } from 'nice-grpc';
import { PullRegistrationError, WorkerStoppedError } from '../../../src/sdk/worker/errors';
import { ReadinessTracker } from '../../../src/sdk/worker/readiness';

const rejection = (status = Status.RESOURCE_EXHAUSTED) =>
  new ClientError('/zdmatch.v1.WorkerTaskService/Connect', status, 'ZD_TOO_MANY_STREAMS: this node has 10 registered streams');

describe('readiness', () => {
  it('is not ready before every required slot kind registered, then ready', async () => {
    const r = new ReadinessTracker(['STEP_AND_RPC', 'RPC_ONLY']);
    const wait = r.wait();
    r.registered('STEP_AND_RPC');
    expect(r.snapshot().isReady).toBe(false);
    r.registered('RPC_ONLY');
    await expect(wait).resolves.toBeUndefined();
    expect(r.snapshot()).toEqual({
      isReady: true,
      queues: [
        { slotKind: 'STEP_AND_RPC', hasRegisteredStream: true, lastPermanentError: null },
        { slotKind: 'RPC_ONLY', hasRegisteredStream: true, lastPermanentError: null },
      ],
    });
  });

  it('never counts a kind\'s registered streams below none: an unmatched unregister leaves the next register counted', () => {
    const r = new ReadinessTracker(['STEP_AND_RPC']);
    r.unregistered('STEP_AND_RPC');
    r.registered('STEP_AND_RPC');
    expect(r.snapshot().queues[0]!.hasRegisteredStream).toBe(true);
    expect(r.permanentRejection('STEP_AND_RPC', rejection())).toBeNull();
  });

  it('stays ready across reconnects (no registered stream, no permanent error)', async () => {
    const r = new ReadinessTracker(['STEP_AND_RPC']);
    r.registered('STEP_AND_RPC');
    r.unregistered('STEP_AND_RPC');
    expect(r.snapshot().isReady).toBe(true);
    expect(r.snapshot().queues[0]!.hasRegisteredStream).toBe(false);
    await expect(r.wait()).resolves.toBeUndefined();
  });

  it('ignores a rejection while another stream of the kind is registered', () => {
    const r = new ReadinessTracker(['STEP_AND_RPC']);
    r.registered('STEP_AND_RPC');
    expect(r.permanentRejection('STEP_AND_RPC', rejection())).toBeNull();
    expect(r.snapshot().isReady).toBe(true);
  });

  it('turns false on no registered stream and a permanent error; registration clears it', () => {
    const r = new ReadinessTracker(['STEP_AND_RPC', 'RPC_ONLY']);
    r.registered('STEP_AND_RPC');
    r.registered('RPC_ONLY');
    r.unregistered('RPC_ONLY');
    const err = r.permanentRejection('RPC_ONLY', rejection());
    expect(err).toBeInstanceOf(PullRegistrationError);
    expect(err!.slotKind).toBe('RPC_ONLY');
    expect(err!.code).toBe(Status.RESOURCE_EXHAUSTED);
    expect(err!.zdCode).toBe('ZD_TOO_MANY_STREAMS');
    expect(err!.cause).toBeInstanceOf(ClientError);
    const snap = r.snapshot();
    expect(snap.isReady).toBe(false);
    expect(snap.queues[1]!.lastPermanentError).toBe(err);
    r.registered('RPC_ONLY');
    expect(r.snapshot().isReady).toBe(true);
    expect(r.snapshot().queues[1]!.lastPermanentError).toBeNull();
  });

  it('once ready, waits keep resolving even while a kind is failing', async () => {
    const r = new ReadinessTracker(['STEP_AND_RPC']);
    r.registered('STEP_AND_RPC');
    r.unregistered('STEP_AND_RPC');
    r.permanentRejection('STEP_AND_RPC', rejection());
    await expect(r.wait()).resolves.toBeUndefined();
  });

  it('rejects pending and later waiters with PullRegistrationError before readiness', async () => {
    const r = new ReadinessTracker(['STEP_AND_RPC']);
    const a = r.wait();
    const b = r.wait();
    r.permanentRejection('STEP_AND_RPC', rejection(Status.PERMISSION_DENIED));
    await expect(a).rejects.toBeInstanceOf(PullRegistrationError);
    await expect(b).rejects.toMatchObject({ slotKind: 'STEP_AND_RPC', code: Status.PERMISSION_DENIED });
    await expect(r.wait()).rejects.toBeInstanceOf(PullRegistrationError);
    r.registered('STEP_AND_RPC');
    await expect(r.wait()).resolves.toBeUndefined();
  });

  it('rejects when the worker stops before readiness, and not after', async () => {
    const r = new ReadinessTracker(['STEP_AND_RPC']);
    const a = r.wait();
    r.close();
    await expect(a).rejects.toBeInstanceOf(WorkerStoppedError);
    await expect(r.wait()).rejects.toBeInstanceOf(WorkerStoppedError);

    const ready = new ReadinessTracker(['STEP_AND_RPC']);
    ready.registered('STEP_AND_RPC');
    ready.close();
    await expect(ready.wait()).resolves.toBeUndefined();
    expect(ready.snapshot().isReady).toBe(true); // stop alone does not clear readiness
  });

  it('rejects with the signal reason and forgets the waiter', async () => {
    const r = new ReadinessTracker(['STEP_AND_RPC']);
    const ac = new AbortController();
    const w = r.wait(ac.signal);
    ac.abort(new Error('deadline'));
    await expect(w).rejects.toThrow('deadline');
    await expect(r.wait(AbortSignal.abort(new Error('already')))).rejects.toThrow('already');
  });
});
