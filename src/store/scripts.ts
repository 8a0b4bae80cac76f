/**
 * Loads store/lua/*.lua, inlines `--@include "name"` from lua/includes/, and
 * registers each with ioredis `defineCommand` (EVALSHA with the NOSCRIPT
 * fallback handled by ioredis). File names are `<verb><Noun>-<numKeys>.lua`.
 * The three scripts of every Step go through `hotScripts` instead.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Cluster, Redis, Result } from 'ioredis';
import { HotScript } from './script-call';

const LUA_DIR = path.join(__dirname, 'lua');
/** Sent through `hotScripts`, not registered as ioredis commands. */
const HOT_SCRIPTS = ['zdEnqueueTasks', 'zdStartTasks', 'zdCompleteTasks'];

type Arg = string | number | Buffer;
type Reply = (string | number | Buffer | Reply[] | null)[];

declare module 'ioredis' {
  interface RedisCommander<Context> {
    zdEnqueueTask(k1: string, ...args: Arg[]): Result<Reply, Context>;
    zdFailTask(k1: string, k2: string, k3: string, ...args: Arg[]): Result<Reply, Context>;
    zdReleaseTask(k1: string, k2: string, ...args: Arg[]): Result<Reply, Context>;
    zdHeartbeatTask(k1: string, k2: string, ...args: Arg[]): Result<Reply, Context>;
    zdCancelFlow(k1: string, k2: string, ...args: Arg[]): Result<Reply, Context>;
    zdTimeoutTask(k1: string, k2: string, k3: string, ...args: Arg[]): Result<Reply, Context>;
    // fetch surface (store/fetch-store.ts)
    zdLockTasksBuffer(k1: string, ...args: Arg[]): Result<Reply, Context>;
    zdCompleteLocked(k1: string, ...args: Arg[]): Result<Reply, Context>;
    zdFailLocked(k1: string, ...args: Arg[]): Result<Reply, Context>;
    zdExtendLock(k1: string, ...args: Arg[]): Result<Reply, Context>;
    zdUnlockTask(k1: string, ...args: Arg[]): Result<Reply, Context>;
    zdRetryTerminal(k1: string, ...args: Arg[]): Result<Reply, Context>;
    zdAbandonTerminal(k1: string, ...args: Arg[]): Result<Reply, Context>;
    zdAcquireLease(k1: string, k2: string, ...args: Arg[]): Result<Reply, Context>;
    zdRenewLease(k1: string, ...args: Arg[]): Result<number, Context>;
    zdReleaseLease(k1: string, ...args: Arg[]): Result<number, Context>;
    zdRemoveMember(k1: string, ...args: Arg[]): Result<number, Context>;
    zdReadTime(k1: string): Result<[string, string], Context>;
    zdDropStaleEntry(k1: string, k2: string, ...args: Arg[]): Result<number, Context>;
    zdPruneQueue(k1: string, k2: string, ...args: Arg[]): Result<number, Context>;
    zdPruneConsumers(k1: string, ...args: Arg[]): Result<number, Context>;
  }
}

export type ScriptReply = Reply;

function inline(source: string, seen = new Set<string>()): string {
  return source.replace(/^--@include "([\w-]+)"$/gm, (_, name: string) => {
    if (seen.has(name)) return '';
    seen.add(name);
    return inline(fs.readFileSync(path.join(LUA_DIR, 'includes', `${name}.lua`), 'utf8'), seen);
  });
}

/**
 * Reads every script: command name (zd + file verb/noun) → { numberOfKeys, lua }.
 * `slotGuard` (for a Redis Cluster) puts lua/includes/slot-guard.lua first: a
 * script refuses a slot mid-migration before it writes. On one Redis no slot
 * ever migrates, and the guard would only cost its probe.
 */
export function readScripts(slotGuard = false): Map<string, { numberOfKeys: number; lua: string }> {
  const out = new Map<string, { numberOfKeys: number; lua: string }>();
  for (const file of fs.readdirSync(LUA_DIR)) {
    const m = /^(\w+)-(\d+)\.lua$/.exec(file);
    if (!m) continue;
    const name = `zd${m[1]![0]!.toUpperCase()}${m[1]!.slice(1)}`;
    out.set(name, { numberOfKeys: Number(m[2]), lua: inline(`${slotGuard ? '--@include "slot-guard"\n' : ''}${fs.readFileSync(path.join(LUA_DIR, file), 'utf8')}`) });
  }
  return out;
}

/** Registers every script on a client (idempotent per client). */
export function defineScripts(client: Redis | Cluster): void {
  const marked = client as unknown as { __zdScripts?: boolean };
  if (marked.__zdScripts) return;
  for (const [name, def] of readScripts(client.isCluster)) if (!HOT_SCRIPTS.includes(name)) client.defineCommand(name, def);
  marked.__zdScripts = true;
}

/**
 * The scripts of the happy path, sent through script-call.ts rather than the
 * commands defineScripts registers: their calls carry many arguments.
 */
function readHotScripts(slotGuard: boolean) {
  const all = readScripts(slotGuard);
  const hot = (name: string): HotScript => {
    const def = all.get(name);
    if (!def) throw new Error(`no script ${name}`);
    return new HotScript(def.lua, def.numberOfKeys);
  };
  return { enqueueTasks: hot('zdEnqueueTasks'), startTasks: hot('zdStartTasks'), completeTasks: hot('zdCompleteTasks') };
}

/** The hot scripts for one Redis. */
export const hotScripts = readHotScripts(false);
/** The hot scripts for a Redis Cluster: each with the slot guard first. */
export const clusterHotScripts = readHotScripts(true);

export const hotScriptsFor = (client: Redis | Cluster) => (client.isCluster ? clusterHotScripts : hotScripts);
