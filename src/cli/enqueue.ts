import { randomUUID } from 'node:crypto';
import type { Command } from 'commander';
import { withClient } from './client';
import { nonEmpty } from './common';
import { jsonReplacer, readInput } from './format';

interface EnqueueOptions {
  address: string;
  tenant: string;
  flowId: string;
  flowType: string;
  stepType: string;
  stepExecutionId?: string;
  input?: string;
  json?: boolean;
}

/** `zdmatch enqueue`: enqueue one Step. */
export function registerEnqueue(program: Command): void {
  program
    .command('enqueue')
    .description('enqueue one Step')
    .option('--address <host:port>', 'gRPC API address', '127.0.0.1:8801')
    .requiredOption('--tenant <tenant>', 'tenant', nonEmpty)
    .requiredOption('--flow-id <id>', 'flow id', nonEmpty)
    .requiredOption('--flow-type <type>', 'flow type', nonEmpty)
    .requiredOption('--step-type <type>', 'step type', nonEmpty)
    .option('--step-execution-id <id>', 'step execution id (default: a random UUID; reuse one to retry idempotently)', nonEmpty)
    .option('--input <text|@file>', 'input: a string, or @path to send a file as is')
    .option('--json', 'print the result as JSON')
    .action(async (opts: EnqueueOptions) => {
      const spec = {
        tenant: opts.tenant,
        flowId: opts.flowId,
        flowType: opts.flowType,
        stepType: opts.stepType,
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
