/**
 * The hot-path scripts (enqueueTasks, startTasks, completeTasks) sent as
 * ioredis Commands built in one pass. A call carries 40 to 1 400 arguments;
 * ioredis's own script path copies them three times (rest parameters, an
 * unshift, a spread), flattens them with Array.prototype.flat (≈ 0.19 µs an
 * element on Node 20) and converts them in a second loop: ≈ 0.3 µs an
 * argument, 25 arguments a Step. This path converts each argument once,
 * where it is written (docs/benchmarks.md).
 *
 * EVALSHA first; a server that does not know the script (restarted, failed
 * over, flushed) answers NOSCRIPT, and the call goes again as EVAL, which
 * also loads it for the calls after.
 */
import { createHash } from 'node:crypto';
import { Command } from 'ioredis';

/** A Redis or a Cluster client (structurally: store/redis.ts imports this module). */
interface CommandSender {
  sendCommand(command: Command): unknown;
}

export type ScriptArg = string | number | Buffer;

class ScriptCommand extends Command {
  private readonly withBuffers: boolean;

  constructor(verb: 'evalsha' | 'eval', script: string, numberOfKeys: number, args: readonly ScriptArg[], replyEncoding: 'utf8' | null) {
    // Arguments set below: the base class would flatten and convert them.
    super(verb, [], { replyEncoding });
    const all: (string | Buffer)[] = new Array<string | Buffer>(args.length + 2);
    all[0] = script;
    all[1] = String(numberOfKeys);
    let withBuffers = false;
    for (let i = 0; i < args.length; i++) {
      const a = args[i]!;
      if (typeof a === 'string') all[i + 2] = a;
      else if (typeof a === 'number') all[i + 2] = String(a);
      else {
        all[i + 2] = a;
        withBuffers = true;
      }
    }
    this.args = all;
    this.withBuffers = withBuffers;
  }

  override toWritable(): string | Buffer {
    const args = this.args as (string | Buffer)[];
    let head = `*${args.length + 1}\r\n$${this.name.length}\r\n${this.name}\r\n`;
    if (!this.withBuffers) {
      for (const a of args as string[]) head += `$${Buffer.byteLength(a)}\r\n${a}\r\n`;
      return head;
    }
    // A binary payload: strings between the Buffers, one concat at the end.
    const parts: Buffer[] = [];
    for (const a of args) {
      if (typeof a === 'string') head += `$${Buffer.byteLength(a)}\r\n${a}\r\n`;
      else {
        head += `$${a.length}\r\n`;
        parts.push(Buffer.from(head), a);
        head = '\r\n';
      }
    }
    parts.push(Buffer.from(head));
    return Buffer.concat(parts);
  }
}

export class HotScript {
  readonly sha: string;

  constructor(readonly lua: string, readonly numberOfKeys: number) {
    this.sha = createHash('sha1').update(lua).digest('hex');
  }

  /** Runs the script with `args` (its keys, then its ARGV); replies as strings, or as Buffers with `replyEncoding` null. */
  async call(client: CommandSender, args: readonly ScriptArg[], replyEncoding: 'utf8' | null = 'utf8'): Promise<unknown> {
    try {
      return await client.sendCommand(new ScriptCommand('evalsha', this.sha, this.numberOfKeys, args, replyEncoding));
    } catch (err) {
      if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
      return client.sendCommand(new ScriptCommand('eval', this.lua, this.numberOfKeys, args, replyEncoding));
    }
  }
}
