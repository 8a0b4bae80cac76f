import type { Command } from 'commander';
import { withClient } from './client';
import { nonEmpty } from './common';
import { jsonReplacer, queuesTable } from './format';

interface QueuesOptions {
  address: string;
  tenant: string;
  flowType?: string;
  json?: boolean;
}

/** `zdmatch queues`: the queues of a tenant with their backlog. */
export function registerQueues(program: Command): void {
  program
    .command('queues')
    .description('list the queues of a tenant with their backlog')
    .option('--address <host:port>', 'gRPC API address', '127.0.0.1:8801')
    .requiredOption('--tenant <tenant>', 'tenant', nonEmpty)
    .option('--flow-type <type>', 'only this flow type', nonEmpty)
    .option('--json', 'print JSON')
    .action(async (opts: QueuesOptions) => {
      const queues = await withClient(opts.address, (c) => c.describeQueues(opts.tenant, opts.flowType));
      if (opts.json) {
        // A queue with nothing ready has no oldest entry: null, where JSON.stringify would drop the field.
        const rows = queues.map((q) => ({ ...q, oldestReadyAt: q.oldestReadyAt ?? null }));
        process.stdout.write(`${JSON.stringify(rows, jsonReplacer, 2)}\n`);
      } else if (queues.length === 0) {
        const filter = opts.flowType === undefined ? '' : ` and flow type ${opts.flowType}`;
        process.stdout.write(`no queues for tenant ${opts.tenant}${filter}\n`);
      } else process.stdout.write(`${queuesTable(queues)}\n`);
    });
}
