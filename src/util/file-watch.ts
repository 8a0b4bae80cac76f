/**
 * Files re-read when they change, as secret managers change them: fs.watch on
 * each file's folder (a rename over the file replaces its inode, which a watch
 * on the file would miss; a Kubernetes Secret update renames the folder's
 * `..data` symlink, never the file's own name, so an event on another name is
 * checked with a stat), plus a periodic stat as a fallback where events are
 * not delivered (some network and overlay file systems).
 */
import fs from 'node:fs';
import path from 'node:path';

export class FileWatch {
  private lastStat = '';
  private watchers: fs.FSWatcher[] = [];
  private timer: NodeJS.Timeout | undefined;
  private queued: NodeJS.Timeout | undefined;
  private forced = false;

  /** `changed` runs (after a short settle) when one of `files` may have changed; it calls reading() before it reads them. */
  constructor(private readonly files: readonly string[], private readonly pollMs: number, private readonly changed: () => void) {}

  /** Watches the files' folders and starts the periodic check; `cannotWatch` hears a folder fs.watch refused. */
  start(cannotWatch: (err: Error) => void): void {
    const byFolder = new Map<string, Set<string>>();
    for (const f of this.files) {
      const dir = path.dirname(path.resolve(f));
      byFolder.set(dir, (byFolder.get(dir) ?? new Set()).add(path.basename(f)));
    }
    for (const [dir, names] of byFolder) {
      try {
        const w = fs.watch(dir, { persistent: false }, (_ev, name) => this.queue(!!name && !names.has(name.toString())));
        w.on('error', () => undefined);
        this.watchers.push(w);
      } catch (err) {
        cannotWatch(err as Error);
      }
    }
    this.timer = setInterval(() => this.check(), this.pollMs);
    this.timer.unref();
  }

  stop(): void {
    for (const w of this.watchers) w.close();
    this.watchers = [];
    if (this.timer) clearInterval(this.timer);
    if (this.queued) clearTimeout(this.queued);
  }

  /** Records the files' state as read now: only a change after this one is a change. */
  reading(): void {
    this.lastStat = this.statKey();
  }

  /** `ifChanged`: only when the stat differs (an event on another name in the folder). */
  private queue(ifChanged: boolean): void {
    // Writers change a file in several steps (an editor, cert and key copied one after the other): settle for a moment.
    if (this.queued) clearTimeout(this.queued);
    this.forced ||= !ifChanged;
    this.queued = setTimeout(() => {
      this.queued = undefined;
      if (this.forced) this.changed();
      else this.check();
      this.forced = false;
    }, 20);
    this.queued.unref();
  }

  private statKey(): string {
    return this.files.map((f) => {
      try {
        const s = fs.statSync(f);
        return `${s.ino}:${s.size}:${s.mtimeMs}`;
      } catch (err) {
        return `error:${(err as NodeJS.ErrnoException).code ?? ''}`;
      }
    }).join('|');
  }

  private check(): void {
    if (this.statKey() !== this.lastStat) this.changed();
  }
}
