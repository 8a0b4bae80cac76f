#!/usr/bin/env node
/**
 * The `zdmatch` command. Exit codes: 0 ok, 1 failure, 2 bad config or usage.
 * Errors print one line on stderr (ZD_CLI_DEBUG=1 adds the stack).
 */
import fs from 'node:fs';
import path from 'node:path';
import { Command, CommanderError } from 'commander';
import { registerCluster } from './cluster';
import { CliExit, EXIT_CONFIG, EXIT_FAILURE } from './common';
import { registerDev } from './dev';
import { registerEnqueue } from './enqueue';
import { registerOutcomeGroups } from './outcome-groups';
import { registerQueues } from './queues';
import { registerServe } from './serve';
import { registerTask } from './task';
import { registerTerminal } from './terminal';

function version(): string {
  try {
    const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version?: string };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

/** Commands that keep running after their action resolves. */
const LONG_RUNNING = new Set(['serve', 'dev']);

/**
 * process.exit once stdout and stderr have written everything: into a pipe
 * (`| jq`) a write past the pipe's buffer completes later, and exiting at
 * once would cut the output there. A reader that left early (`| head`) ends
 * the wait too, without a stack trace.
 */
function exitWhenFlushed(code: number): Promise<never> {
  const flushed = (s: NodeJS.WriteStream) => new Promise<void>((resolve) => {
    s.once('error', () => resolve());
    s.write('', () => resolve());
  });
  return Promise.all([flushed(process.stdout), flushed(process.stderr)]).then(() => process.exit(code));
}

export function buildProgram(): Command {
  const program = new Command('zdmatch')
    .description('Redis-backed matching cluster for pull workers')
    .version(version())
    .exitOverride()
    .showHelpAfterError();
  // A one-shot command's stderr carries its errors (enqueue --file reports failed lines there):
  // Node's deprecation notices are for developers, and grpc-js draws one (DEP0123) from every
  // TLS dial of an IP address, which --address 127.0.0.1 with ZD_TLS_CA is.
  program.hook('preAction', (_program, action) => {
    if (!LONG_RUNNING.has(action.name())) process.noDeprecation = true;
  });
  // One-shot commands exit once done, even if a client library keeps a handle open.
  program.hook('postAction', async (_program, action) => {
    if (!LONG_RUNNING.has(action.name())) await exitWhenFlushed(Number(process.exitCode ?? 0));
  });
  registerServe(program);
  registerDev(program);
  registerEnqueue(program);
  registerQueues(program);
  registerTask(program);
  registerCluster(program);
  registerTerminal(program);
  registerOutcomeGroups(program);
  require('./bench').registerBench(program); // zdmatch bench (src/cli/bench.ts)
  return program;
}

/** One line for the user; the stack only on request. */
function report(err: unknown): number {
  if (err instanceof CliExit) {
    process.stderr.write(`${err.message}\n`);
    return err.code;
  }
  if (err instanceof CommanderError) {
    // commander already printed its message (or the help / version).
    return err.exitCode === 0 ? 0 : EXIT_CONFIG;
  }
  const message = err instanceof Error ? err.message.split('\n')[0] : String(err);
  process.stderr.write(`error: ${message}\n`);
  if (process.env.ZD_CLI_DEBUG === '1' && err instanceof Error && err.stack) process.stderr.write(`${err.stack}\n`);
  return EXIT_FAILURE;
}

export async function main(argv: readonly string[] = process.argv): Promise<void> {
  // A reader that left before a write (`--help | true`, `2>&1 | head -1`) fails it with EPIPE:
  // unhandled, that would print a stack and exit 1 in place of the command's own code.
  for (const s of [process.stdout, process.stderr]) {
    s.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE') throw err;
    });
  }
  try {
    await buildProgram().parseAsync([...argv]);
  } catch (err) {
    // Exit at once: a half-started node or a client may hold handles open.
    process.exit(report(err));
  }
}

if (require.main === module) void main();
