import type { Command } from 'commander';
import { withClient } from './client';
import { nonEmpty } from './common';
import { jsonReplacer, taskTable } from './format';

interface TaskOptions {
  address: string;
  json?: boolean;
}

/** `zdmatch task <taskId>`: one task's state (a missing task is ZdNotFoundError → exit 1). */
export function registerTask(program: Command): void {
  program
    .command('task')
    .description('show a task')
    .argument('<taskId>', 'task id (printed by enqueue)', nonEmpty)
    .option('--address <host:port>', 'gRPC API address', '127.0.0.1:8801')
    .option('--json', 'print JSON')
    .action(async (taskId: string, opts: TaskOptions) => {
      const task = await withClient(opts.address, (c) => c.getTask(taskId));
      if (opts.json) process.stdout.write(`${JSON.stringify(task, jsonReplacer, 2)}\n`);
      else process.stdout.write(`${taskTable(task)}\n`);
    });
}
