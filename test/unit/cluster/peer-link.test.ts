/**
 * A node's link to one peer (src/cluster/peer-link.ts) with a scripted peer: at
 * most 64 offer batches await answers on it and none once it ended; the reason it
 * ended tells an older peer without Link (UNIMPLEMENTED) from a break; and the
 * serving end answers a batch its handler failed with no result for each offer,
 * so the owner settles them rather than taking them as run; a frame that did not
 * decode ends the link as an invalid argument naming it, not dropped as an empty frame.
 */
import { ClientError, Status } from 'nice-grpc';
import { LinkServer, PeerLink } from '../../../src/cluster/peer-link';
import { createLogger } from '../../../src/util/logger';
import { PeerServiceDefinition, pb } from '../../../src/wire';
import { ZdError } from '../../../src/errors/server-error';

const log = createLogger('silent');
const tick = () => new Promise((r) => setTimeout(r, 5));

it('lets 64 offer batches await answers on a link, no more, and none once the link ended', async () => {
  let end!: () => void;
  const client = {
    link: () => (async function* () {
      yield { hello: {} };
      await new Promise<void>((r) => { end = r; });
    })(),
  };
  const link = new PeerLink(client as never, 60_000, () => undefined, log);
  await tick();
  const answers: Promise<unknown>[] = [];
  while (link.roomForOffers) answers.push(link.offers({ offers: [] }).catch(() => 'failed'));
  expect(answers).toHaveLength(64);
  end();
  await Promise.all(answers);
  expect(link.open).toBe(false);
  expect(link.roomForOffers).toBe(false);
});

it.each([[Status.UNIMPLEMENTED, true], [Status.UNAVAILABLE, false]])('tells the end of a link with status %s as a peer without Link: %s', async (code, unimplemented) => {
  const ended: boolean[] = [];
  const client = {
    link: () => (async function* () {
      await tick();
      throw new ClientError('/PeerService/Link', code, 'ended');
    })(),
  };
  new PeerLink(client as never, 60_000, (u) => void ended.push(u), log);
  await new Promise((r) => setTimeout(r, 30));
  expect(ended).toEqual([unimplemented]);
});

it('answers a batch whose handling failed with no result for each of its offers', async () => {
  const server = new LinkServer({
    capacity: () => undefined, doorbell: () => undefined,
    offerBatch: () => Promise.reject(new Error('store down')),
  }, log);
  const requests = (async function* () {
    yield pb.LinkFrame.fromObject({ id: 7, offers: { offers: [{ ref: { task_id: 'a' } }, { ref: { task_id: 'b' } }] } });
  })();
  const out: pb.ILinkFrame[] = [];
  for await (const f of server.handler()(requests, { signal: new AbortController().signal } as never)) out.push(f);
  expect(out[0]).toEqual({ hello: {} });
  expect(Number(out[1]!.id)).toBe(7);
  expect(out[1]!.offer_results!.results).toEqual([pb.OfferResult.OFFER_RESULT_UNSPECIFIED, pb.OfferResult.OFFER_RESULT_UNSPECIFIED]);
});

it('ends the link over a frame that did not decode, naming it, and reads none of the frames after it', async () => {
  const batches: unknown[] = [];
  const server = new LinkServer({
    capacity: () => undefined, doorbell: () => undefined,
    offerBatch: (b) => { batches.push(b); return Promise.resolve({ results: [] }); },
  }, log);
  const requests = (async function* () {
    yield PeerServiceDefinition.link.requestDeserialize(Uint8Array.from([0x0a, 0x7f]));
    yield pb.LinkFrame.fromObject({ id: 8, offers: { offers: [{ ref: { task_id: 'a' } }] } });
  })();
  const out: pb.ILinkFrame[] = [];
  let ended: unknown;
  try {
    for await (const f of server.handler()(requests as AsyncIterable<pb.LinkFrame>, { signal: new AbortController().signal } as never)) out.push(f);
  } catch (err) {
    ended = err;
  }
  expect(out).toEqual([{ hello: {} }]);
  expect(batches).toEqual([]);
  expect(ended).toBeInstanceOf(ZdError);
  expect((ended as ZdError).zdCode).toBe('ZD_INVALID_ARGUMENT');
  expect((ended as ZdError).params).toEqual({ field: 'frame', reason: expect.stringMatching(/^is not a valid LinkFrame protobuf message \(.+\)$/) });
  expect(server.size).toBe(0);
});
