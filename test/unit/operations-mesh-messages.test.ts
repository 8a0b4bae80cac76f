/**
 * docs/operations.md "Scale" names the messages dexzd_mesh_messages_total
 * counts by its `message` label; an operator reading an unlisted series (or
 * looking for a listed one that never comes) is misled.
 */
import fs from 'node:fs';
import path from 'node:path';
import { MESH_MESSAGES } from '../../src/metrics/registry';

it('lists every message dexzd_mesh_messages_total counts, and no other', () => {
  const ops = fs.readFileSync(path.resolve(__dirname, '..', '..', 'docs', 'operations.md'), 'utf8').replace(/\s+/g, ' ');
  const list = /`dexzd_mesh_messages_total\{message\}` \(messages to peers: ([^)]*?)\) and/.exec(ops)?.[1];
  expect(list).toBeDefined();
  const named = [...list!.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!);
  expect([...named].sort()).toEqual([...MESH_MESSAGES].sort());
});
