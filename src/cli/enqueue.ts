import { randomUUID } from 'node:crypto';
import type { Command } from 'commander';
import { withClient } from './client';
import { CliExit, EXIT_CONFIG, nonEmpty, wholeNumber } from './common';
import type { BulkSummary, LineFailure } from './enqueue-file';
import { jsonReplacer, readInput } from './format';

interface EnqueueOptions {
  address: string;
  tenant?: string;
  flowId?: string;
  flowType?: string;
  stepType?: string;
  stepExecutionId?: string;
  input?: string;
  file?: string;
  batch: string;
  inflight: string;
  retries: string;
  progress: boolean;
  json?: boolean;
}

/** The one-Step flags: each required without --file, and refused with it (a line carries its own). */
const STEP_FLAGS = [
  ['tenant', '--tenant <tenant>'], ['flowId', '--flow-id <id>'], ['flowType', '--flow-type <type>'], ['stepType', '--step-type <type>'],
  ['stepExecutionId', '--step-execution-id <id>'], ['input', '--input <text|@file>'],
] as const;
const REQUIRED_WITHOUT_FILE = new Set(['tenant', 'flowId', 'flowType', 'stepType']);

/** `zdmatch enqueue`: enqueue one Step, or every Step of an NDJSON file (--file). */
export function registerEnqueue(program: Command): void {
  program
    .command('enqueue')
    .description('enqueue one Step, or one Step per line of an NDJSON file (--file)')
    .option('--address <host:port>', 'gRPC API address', '127.0.0.1:8801')
    .option('--tenant <tenant>', 'tenant (required without --file)', nonEmpty)
    .option('--flow-id <id>', 'flow id (required without --file)', nonEmpty)
    .option('--flow-type <type>', 'flow type (required without --file)', nonEmpty)
    .option('--step-type <type>', 'step type (required without --file)', nonEmpty)
    .option('--step-execution-id <id>', 'step execution id (default: a random UUID; reuse one to retry idempotently)', nonEmpty)
    .option('--input <text|@file>', 'input: a string, or @path to send a file as is')
    .option('--file <path|->', 'enqueue one Step per line of this NDJSON file (- for stdin); each line names its own stepExecutionId', nonEmpty)
    .option('--batch <n>', 'with --file: most Steps per enqueue call', '100')
    .option('--inflight <n>', 'with --file: enqueue calls in flight at once', '4')
    .option('--retries <n>', 'with --file: retries of a batch the node could not take (UNAVAILABLE, timeout) before the load stops', '8')
    .option('--no-progress', 'with --file: no progress bar')
    .option('--json', 'print the result as JSON (with --file: the summary, and each failed line as JSON on stderr)')
    .action(async (opts: EnqueueOptions, cmd: Command) => {
      if (opts.file !== undefined) return enqueueFile(opts.file, opts);
      for (const [key, flag] of STEP_FLAGS) {
        if (REQUIRED_WITHOUT_FILE.has(key) && opts[key] === undefined) cmd.error(`error: required option '${flag}' not specified`);
      }
      for (const name of ['batch', 'inflight', 'retries']) {
        if (cmd.getOptionValueSource(name) === 'cli') throw new CliExit(`--${name}: only with --file`, EXIT_CONFIG);
      }
      const spec = {
        tenant: opts.tenant!,
        flowId: opts.flowId!,
        flowType: opts.flowType!,
        stepType: opts.stepType!,
        stepExecutionId: opts.stepExecutionId ?? randomUUID(),
        input: readInput(opts.input),
      };
      const result = await withClient(opts.address, (c) => c.enqueueStep(spec));
      if (opts.json) {
        process.stdout.write(`${JSON.stringify({ ...result, stepExecutionId: spec.stepExecutionId }, jsonReplacer)}\n`);
      } else {
        const existed = result.created ? '' : ' (already existed)';
        process.stdout.write(`task ${result.taskId} partition ${result.partition}${existed}\n`);
      }
    });
}

/** --file: exit 0 when every line loaded, 1 when any failed or the load stopped. */
async function enqueueFile(file: string, opts: EnqueueOptions): Promise<void> {
  for (const [key, flag] of STEP_FLAGS) {
    if (opts[key] !== undefined) throw new CliExit(`${flag.split(' ')[0]}: not with --file (each line names its own)`, EXIT_CONFIG);
  }
  const batch = wholeNumber('--batch', opts.batch, 1, 1000);
  const inflight = wholeNumber('--inflight', opts.inflight, 1, 256);
  const retries = wholeNumber('--retries', opts.retries, 0, 1000);
  const { loadSteps, openInput, summaryTable } = await import('./enqueue-file'); // with the SDK's mappers
  const { stream, size } = openInput(file);
  const bar = opts.progress && !opts.json && process.stderr.isTTY ? await makeBar(size) : undefined;
  const onFailure = (f: LineFailure) => {
    if (opts.json) process.stderr.write(`${JSON.stringify(f)}\n`);
    else (bar ? bar.log : (t: string) => process.stderr.write(t))(`line ${f.line}: ${f.field ? `${f.field}: ` : ''}${f.error}\n`);
  };
  let summary: BulkSummary;
  try {
    summary = await withClient(opts.address, (c) => loadSteps(c, stream, {
      batch, inflight, retries, onFailure,
      onNotice: (text) => (bar ? bar.log : (t: string) => process.stderr.write(t))(`note: ${text}\n`),
      ...(bar ? { onProgress: (s, bytes) => bar.update(s, bytes) } : {}),
    }));
  } finally {
    bar?.stop();
  }
  if (opts.json) process.stdout.write(`${JSON.stringify(summary)}\n`);
  else process.stdout.write(`${summaryTable(summary)}\n`);
  if (summary.stoppedAtLine !== undefined) {
    process.stderr.write(`error: the load stopped at line ${summary.stoppedAtLine}: ${summary.stopReason ?? ''}; lines from there on may not be loaded (loading the same file again is safe)\n`);
  }
  if (summary.failed > 0 || summary.stoppedAtLine !== undefined) process.exitCode = 1;
}

/** A progress bar on stderr: over the file's bytes when its size is known, else counts alone (stdin). */
async function makeBar(totalBytes: number | undefined): Promise<{ update(s: BulkSummary, bytes: number): void; log(text: string): void; stop(): void }> {
  const { MultiBar, Presets } = await import('cli-progress');
  const counts = '{lines} lines | {created} created | {existed} existed | {failed} failed | {rate} lines/s';
  const multi = new MultiBar(
    { stream: process.stderr, format: totalBytes ? `enqueue [{bar}] {percentage}% | ${counts}` : `enqueue | ${counts}`, hideCursor: true },
    Presets.shades_classic,
  );
  const payload = (s?: BulkSummary) => ({
    lines: s?.lines ?? 0, created: s?.created ?? 0, existed: (s?.alreadyExisted ?? 0) + (s?.createdOrExisted ?? 0), failed: s?.failed ?? 0, rate: s?.linesPerSec ?? 0,
  });
  const bar = multi.create(totalBytes || 1, 0, payload());
  let stopped = false;
  return {
    update: (s, bytes) => bar.update(Math.min(bytes, totalBytes || 0), payload(s)),
    log: (text) => multi.log(text),
    stop: () => {
      if (stopped) return;
      stopped = true;
      multi.stop();
    },
  };
}
