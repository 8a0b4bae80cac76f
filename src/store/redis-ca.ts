/**
 * redis.tlsCa kept current with the disk (docs/security.md, TLS to Redis): a CA bundle rewritten
 * when Redis's certificates move to a new CA is read again (util/file-watch.ts) and checked, and the
 * connections Redis clients open from then on check Redis's certificate against it. ioredis reads a
 * client's `tls` options at each connect — a reconnect, a Sentinel's and the primary it names, a
 * Redis Cluster node's new connection — so the options objects handed out here are updated in place.
 * Connections already open keep the CA they were checked with.
 *
 * A bundle that does not check out (half written, no certificate in it) is never used: it is read
 * again for a moment, as a writer may not be done with it, then an ERROR names the file.
 */
import fs from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import { caBundleProblem } from '../config/tls-files';
import { FileWatch } from '../util/file-watch';
import type { Logger } from '../util/logger';

/** The fs.watch fallback: a stat of the file this often. */
const CHECK_MS = 10_000;
/** How long a bundle that does not check out is read again before it is reported. */
export const REDIS_CA_SETTLE_MS = 2_000;

export class RedisCa {
  private ca: Buffer;
  private readonly watch: FileWatch;
  /** The tls options of every client made with this CA: each reload sets their `ca`. */
  private readonly handedOut = new Set<ConnectionOptions>();
  private settle: NodeJS.Timeout | undefined;
  /** Reads of the file so far, good or bad (tests wait on it). */
  generation = 0;

  /** Reads the file now; throws when it does not check out. */
  constructor(private readonly file: string, private readonly log: Logger, pollMs = CHECK_MS) {
    this.watch = new FileWatch([file], pollMs, () => this.reload());
    this.watch.reading();
    const ca = fs.readFileSync(file);
    const problem = caBundleProblem(file, ca);
    if (problem) throw new Error(`config redis.tlsCa: ${problem}`);
    this.ca = ca;
  }

  /** TLS options for one client; kept current with the file. */
  options(): ConnectionOptions {
    const o: ConnectionOptions = { ca: this.ca };
    this.handedOut.add(o);
    return o;
  }

  start(): void {
    this.watch.start((err) => this.log.warn({ err: err.message }, 'redis.tlsCa: cannot watch the file; relying on the periodic check'));
  }

  stop(): void {
    this.watch.stop();
    if (this.settle) clearTimeout(this.settle);
    this.settle = undefined;
  }

  /** Reads the file again; a good bundle that differs is used for new connections from now on. */
  reload(): void {
    if (this.settle) clearTimeout(this.settle);
    this.read(0, 50);
  }

  private read(waited: number, delay: number): void {
    this.settle = undefined;
    this.watch.reading();
    this.generation++;
    let problem: string | undefined;
    let next: Buffer | undefined;
    try {
      next = fs.readFileSync(this.file);
      problem = caBundleProblem(this.file, next);
    } catch (err) {
      problem = `cannot read ${this.file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`;
    }
    if (!next || problem) {
      if (waited >= REDIS_CA_SETTLE_MS) {
        this.log.error({ key: 'redis.tlsCa', file: this.file, err: problem }, `redis.tlsCa: ${problem}; new connections to Redis keep the CA in use until the file is fixed`);
        return;
      }
      const wait = Math.min(delay, REDIS_CA_SETTLE_MS - waited);
      this.settle = setTimeout(() => this.read(waited + wait, delay * 2), wait);
      this.settle.unref();
      return;
    }
    if (next.equals(this.ca)) return;
    this.ca = next;
    for (const o of this.handedOut) o.ca = next;
    this.log.info({ file: this.file }, 'redis.tlsCa reloaded; new connections to Redis check against it');
  }
}
