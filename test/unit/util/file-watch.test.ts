/**
 * Files followed as secret managers change them: a change heard by fs.watch or
 * by the periodic stat (where a folder cannot be watched), reported again only
 * after a further change once the reader has recorded what it read, and never
 * after stop.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FileWatch } from '../../../src/util/file-watch';
import { sleep as pause, waitFor } from '../../helpers/wait';

let dir: string;
let watch: FileWatch | undefined;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zd-watch-'));
});
afterEach(() => {
  watch?.stop();
  watch = undefined;
  fs.rmSync(dir, { recursive: true, force: true });
});

/**
 * A started watch of `files`, stopped after the test, counting the changes it reports. With
 * `recordRead`, the reader records each change as read (reading()), as the node's readers do.
 */
function watching(files: string[], periodMs: number, opts: { recordRead?: boolean; refused?: (err: Error) => void } = {}) {
  const seen = { changes: 0 };
  const w = new FileWatch(files, periodMs, () => {
    seen.changes++;
    if (opts.recordRead) w.reading();
  });
  watch = w;
  w.reading();
  w.start(opts.refused ?? ((err) => { throw err; }));
  return { w, seen };
}

it('hears a file rewritten in place, and the periodic check not again once reading() records it', async () => {
  const file = path.join(dir, 'token');
  fs.writeFileSync(file, 'one');
  const { seen } = watching([file], 100, { recordRead: true });
  await pause(400); // several periodic checks: nothing changed
  expect(seen.changes).toBe(0);
  fs.writeFileSync(file, 'two, longer');
  await waitFor(() => seen.changes >= 1, { timeoutMs: 5000, description: 'the rewrite heard' });
  await pause(300); // the write's own events (a writer may raise more than one) are over
  const heard = seen.changes;
  await pause(600); // recorded as read: the periodic checks find nothing new
  expect(seen.changes).toBe(heard);
});

it('hears a change through its folder at once, long before the periodic check', async () => {
  // A Kubernetes Secret update: the files are symlinks through ..data, swapped to a new folder.
  const v1 = path.join(dir, '..v1');
  const v2 = path.join(dir, '..v2');
  fs.mkdirSync(v1);
  fs.mkdirSync(v2);
  fs.writeFileSync(path.join(v1, 'token'), 'one');
  fs.writeFileSync(path.join(v2, 'token'), 'two');
  fs.symlinkSync('..v1', path.join(dir, '..data'));
  fs.symlinkSync(path.join('..data', 'token'), path.join(dir, 'token'));
  const { seen } = watching([path.join(dir, 'token')], 600_000);
  fs.symlinkSync('..v2', path.join(dir, '..data_tmp'));
  fs.renameSync(path.join(dir, '..data_tmp'), path.join(dir, '..data'));
  await waitFor(() => seen.changes >= 1, { timeoutMs: 5000, description: 'the ..data swap heard' });
});

it('falls back to the periodic check for a folder it cannot watch', async () => {
  const later = path.join(dir, 'later');
  const file = path.join(later, 'token');
  const refused: Error[] = [];
  const { seen } = watching([file], 100, { refused: (err) => void refused.push(err) });
  expect(refused).toHaveLength(1); // the folder does not exist yet
  fs.mkdirSync(later);
  fs.writeFileSync(file, 'one');
  await waitFor(() => seen.changes >= 1, { timeoutMs: 5000, description: 'the file found by the periodic check' });
});

it('reports nothing once stopped', async () => {
  const file = path.join(dir, 'token');
  fs.writeFileSync(file, 'one');
  const { w, seen } = watching([file], 100);
  w.stop();
  fs.writeFileSync(file, 'two, longer');
  await pause(600);
  expect(seen.changes).toBe(0);
});

it('hears a file rewritten in place with its size and modification time kept, beside another file of the folder', async () => {
  // A copy that keeps the source's times (cp -p) over a certificate of the same length: its stat does not change.
  const cert = path.join(dir, 'tls.crt');
  const key = path.join(dir, 'tls.key');
  const KEPT = 1_700_000_000;
  for (const f of [cert, key]) {
    fs.writeFileSync(f, 'one');
    fs.utimesSync(f, KEPT, KEPT);
  }
  const { seen } = watching([cert, key], 600_000);
  fs.writeFileSync(cert, 'two');
  fs.utimesSync(cert, KEPT, KEPT);
  await waitFor(() => seen.changes >= 1, { timeoutMs: 5000, description: 'the rewrite heard by its name' });
});

it('reports a burst of writes once, and nothing for writes to other files of its folder', async () => {
  const file = path.join(dir, 'token');
  const other = path.join(dir, 'notes');
  fs.writeFileSync(file, 'one');
  const { seen } = watching([file], 600_000, { recordRead: true });
  fs.writeFileSync(file, 'two');
  fs.writeFileSync(file, 'three');
  fs.writeFileSync(file, 'four, longer');
  await waitFor(() => seen.changes >= 1, { timeoutMs: 5000, description: 'the writes heard' });
  await pause(300);
  expect(seen.changes).toBe(1);
  fs.writeFileSync(other, 'unrelated');
  fs.writeFileSync(other, 'unrelated, again');
  await pause(300);
  expect(seen.changes).toBe(1);
});
