/**
 * Offer batches toward a peer that confirms the link and then reads nothing: a batch
 * that times out is taken back if it was never written, so the queue stays within the
 * link's limit of batches awaiting answers. The peer is a scripted PeerService client
 * that answers `hello` and stops reading.
 */
import { PeerLink } from '../../../src/cluster/peer-link';
import { createLogger } from '../../../src/util/logger';

it('keeps no timed-out offer batch queued toward a peer that stopped reading', async () => {
  // Guards the timeout's give-back: the batch left the awaited ones but its frame stayed
  // queued, so 20 rounds queued 1 280 frames, all run by the peer once it caught up.
  const client = {
    link: () => (async function* () {
      yield { hello: {} };
      await new Promise(() => undefined);
    })(),
  };
  const link = new PeerLink(client as never, 20, () => undefined, createLogger('silent'));
  await new Promise((r) => setTimeout(r, 10));
  let sent = 0;
  for (let round = 0; round < 20; round++) {
    while (link.roomForOffers) {
      sent++;
      link.offers({ offers: [{ ref: { task_id: `t${sent}` } }] }).catch(() => undefined);
    }
    await new Promise((r) => setTimeout(r, 30));
  }
  expect(sent).toBeGreaterThan(100);
  expect(link.backlog.frames).toBeLessThanOrEqual(66);
  link.close();
});
