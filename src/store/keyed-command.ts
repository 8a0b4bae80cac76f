/**
 * Commands that name their key after a subcommand (`XINFO GROUPS <key>`,
 * `XGROUP CREATE <key> …`), sent to the node that holds the key. ioredis finds
 * no key in them, so a Redis Cluster client sent each to a primary at random:
 * the others answered MOVED (a second round trip, for 2 calls in 3 on 3
 * primaries), and one that stopped answering (frozen, cut off) held the call,
 * whatever partition it was for: an outcome trim of a partition on a primary
 * that answered waited for good. On one Redis the key changes nothing.
 */
import { Command } from 'ioredis';
import type { RedisClient } from './redis';

class KeyedCommand extends Command {
  constructor(name: string, args: (string | number)[], private readonly key: string) {
    super(name, args, { replyEncoding: 'utf8' });
  }

  override getKeys(): string[] {
    return [this.key];
  }
}

/** `name subcommand key ...rest` on the node that holds `key`; the reply as ioredis gives it, strings as strings. */
export function sendToKey(redis: RedisClient, name: 'xinfo' | 'xgroup', subcommand: string, key: string, ...rest: (string | number)[]): Promise<unknown> {
  const command = new KeyedCommand(name, [subcommand, key, ...rest], key);
  void redis.sendCommand(command);
  return command.promise;
}
