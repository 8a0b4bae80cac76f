import type { Command } from 'commander';
import type { TerminalTasksClient } from '../sdk/fetch';
import { wholeNumber as count, nonEmpty } from './common';
import { cell, jsonReplacer, oneLine } from './format';
import { checkedAddress, cliConnection } from './client';


interface CommonOptions {
  address: string;
}

async function withTerminalClient<T>(address: string, fn: (c: TerminalTasksClient) => Promise<T>): Promise<T> {
  const dialled = { address: checkedAddress(address), ...cliConnection() };
  const { TerminalTasksClient: SdkClient } = await import('../sdk/fetch'); // loaded when dialled (see withClient)
  const client = new SdkClient(dialled);
  try {
    return await fn(client);
  } finally {
    client.close();
  }
}

/**
 * `zdmatch terminal list|retry|abandon`: the fetch surface's terminal tasks
 * (fetch retries exhausted, lock expired too often) — durable, listed here,
 * not backlog — and their resolution by an operator.
 */
export function registerTerminal(program: Command): void {
  const terminal = program.command('terminal').description('list and resolve terminal tasks of the fetch surface');
  const address = (c: Command) => c.option('--address <host:port>', 'gRPC API address', '127.0.0.1:8801');

  address(terminal.command('list'))
    .description('list the terminal tasks of a tenant, oldest first')
    .requiredOption('--tenant <tenant>', 'tenant', nonEmpty)
    .option('--flow-type <type>', 'only this flow type', nonEmpty)
    .option('--step-type <type>', 'only this step type', nonEmpty)
    .option('--limit <n>', 'at most this many (1-1000)', '100')
    .option('--json', 'print JSON')
    .action(async (opts: CommonOptions & { tenant: string; flowType?: string; stepType?: string; limit: string; json?: boolean }) => {
      const { tasks, incomplete } = await withTerminalClient(opts.address, (c) => c.list(opts.tenant, {
        flowType: opts.flowType, stepType: opts.stepType, limit: count('--limit', opts.limit, 1, 1000),
      }));
      if (incomplete) {
        process.stderr.write('this listing is incomplete: a partition holds more than 20 000 terminal tasks (all tenants\'), ' +
          'and matching ones past them are not listed; retry or abandon these, or narrow --flow-type/--step-type, and list again\n');
      }
      if (opts.json) {
        process.stdout.write(`${JSON.stringify(tasks, jsonReplacer, 2)}\n`);
      } else if (tasks.length === 0 && !incomplete) {
        // Name the filters: "none for the tenant" would tell an operator its terminal tasks are all resolved.
        const filters = [opts.flowType === undefined ? '' : ` and flow type ${opts.flowType}`, opts.stepType === undefined ? '' : ` and step type ${opts.stepType}`];
        process.stdout.write(`no terminal tasks for tenant ${opts.tenant}${filters.join('')}\n`);
      } else {
        for (const t of tasks) {
          process.stdout.write(`${[t.taskId, `${t.topic.flowType}/${t.topic.stepType}`, t.flowId, `attempt ${t.attempt}`,
            cell(t.terminalAt), t.reason, t.lastError ? `last error: ${oneLine(t.lastError.message)}` : ''].filter(Boolean).join('\t')}\n`);
        }
      }
    });

  address(terminal.command('retry'))
    .description('queue a terminal task again with a fresh fetch budget')
    .argument('<taskId>', 'task id', nonEmpty)
    .option('--retries <n>', 'fetch retries it starts with (0 = unset)', '0')
    .action(async (taskId: string, opts: CommonOptions & { retries: string }) => {
      await withTerminalClient(opts.address, (c) => c.retry(taskId, count('--retries', opts.retries, 0, 2_147_483_647)));
      process.stdout.write(`${taskId} queued again\n`);
    });

  address(terminal.command('abandon'))
    .description('end a terminal task with a FAILED outcome')
    .argument('<taskId>', 'task id', nonEmpty)
    .requiredOption('--reason <text>', 'why (carried by the outcome)', nonEmpty)
    .action(async (taskId: string, opts: CommonOptions & { reason: string }) => {
      const outcomeId = await withTerminalClient(opts.address, (c) => c.abandon(taskId, opts.reason));
      process.stdout.write(`${taskId} abandoned (outcome ${outcomeId})\n`);
    });
}
