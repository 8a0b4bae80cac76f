/**
 * The two layouts of a running attempt in its task hash (store/layout.ts):
 * the owner finds the slot, node and boot id of either, and an operator's read
 * spreads a layout-2 `run` field into the four fields of layout 1.
 */
import { attemptNode, attemptSlot, parseRun, spreadRun } from '../../../src/store/layout';

const run = ['1700000000000-3', 'node-a', 'boot-7', '1700000000123'].join('\x1e');

it('parses the four values of a run field in their order', () => {
  expect(parseRun(run)).toEqual({ slot: '1700000000000-3', node: 'node-a', boot: 'boot-7', startedAt: '1700000000123' });
  expect(parseRun('')).toEqual({ slot: '', node: '', boot: '', startedAt: '' });
});

it('finds the slot and node of a layout-2 attempt in its run field, ahead of stray layout-1 fields', () => {
  expect(attemptSlot(run, null, null)).toEqual({ streamId: '1700000000000-3', nodeId: 'node-a' });
  expect(attemptSlot(run, 'old-slot', 'old-node')).toEqual({ streamId: '1700000000000-3', nodeId: 'node-a' });
});

it('finds the slot and node of a layout-1 attempt in its own fields, and empty ones when there are none', () => {
  expect(attemptSlot(null, '1700000000000-9', 'node-b')).toEqual({ streamId: '1700000000000-9', nodeId: 'node-b' });
  expect(attemptSlot(null, null, null)).toEqual({ streamId: '', nodeId: '' });
});

it('finds the node and boot id of either layout; a run without a node names none', () => {
  expect(attemptNode(run, 'old-node', 'old-boot')).toEqual({ node: 'node-a', boot: 'boot-7' });
  expect(attemptNode(['s', '', 'b', '1'].join('\x1e'), null, null)).toEqual({ node: null, boot: 'b' });
  expect(attemptNode(null, 'node-b', 'boot-1')).toEqual({ node: 'node-b', boot: 'boot-1' });
  expect(attemptNode(null, 'node-b', null)).toEqual({ node: 'node-b', boot: '' });
});

it('spreads a run field into the layout-1 fields and leaves a hash without one as it is', () => {
  const h = { status: Buffer.from('running'), run: Buffer.from(run) };
  const out = spreadRun(h);
  expect(Object.fromEntries(Object.entries(out).map(([k, v]) => [k, v.toString()]))).toEqual({
    status: 'running', slot: '1700000000000-3', node: 'node-a', boot: 'boot-7', startedAt: '1700000000123',
  });
  expect(h.run.toString()).toBe(run); // the hash read is not changed
  const plain = { status: Buffer.from('ready') };
  expect(spreadRun(plain)).toEqual(plain);
});
