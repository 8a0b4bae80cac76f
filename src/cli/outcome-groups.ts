import type { Command } from 'commander';
import { withClient } from './client';
import { nonEmpty } from './common';
import { fittedTable, jsonReplacer } from './format';

interface CommonOptions {
  address: string;
}

/** "3 m", "2 h": how long ago a consumer read, for a person. */
function ago(ms: number | undefined): string {
  if (ms === undefined) return 'never';
  if (ms < 60_000) return `${Math.round(ms / 1000)} s ago`;
  if (ms < 3_600_000) return `${Math.round(ms / 60_000)} min ago`;
  if (ms < 172_800_000) return `${(ms / 3_600_000).toFixed(1)} h ago`;
  return `${Math.round(ms / 86_400_000)} d ago`;
}

/**
 * `zdmatch outcome-groups list|drop`: the outcome consumer groups, how far
 * behind each is, and dropping an abandoned one (outcomes are trimmed only
 * once every group has acked them; docs/operations.md).
 */
export function registerOutcomeGroups(program: Command): void {
  const groups = program.command('outcome-groups').description('list outcome consumer groups and drop abandoned ones');
  const address = (c: Command) => c.option('--address <host:port>', 'gRPC API address of any node', '127.0.0.1:8801');

  address(groups.command('list'))
    .description('every outcome consumer group with its lag, unacked outcomes and last read')
    .option('--json', 'print JSON')
    .action(async (opts: CommonOptions & { json?: boolean }) => {
      const list = await withClient(opts.address, (c) => c.listOutcomeGroups());
      if (opts.json) {
        // Unknown lag ('?') and never read ('never') are null: JSON.stringify would drop an undefined field.
        const rows = list.map((g) => ({ ...g, lag: g.lag ?? null, idleMs: g.idleMs ?? null }));
        process.stdout.write(`${JSON.stringify(rows, jsonReplacer, 2)}\n`);
        return;
      }
      if (list.length === 0) {
        process.stdout.write('no outcome consumer groups\n');
        return;
      }
      const rows = list.map((g) => [g.tenant || '(all)', g.group, g.lag === undefined ? '?' : String(g.lag), String(g.pending),
        String(g.consumers), ago(g.idleMs), String(g.partitions), g.registered ? 'yes' : 'no']);
      const head = ['tenant', 'group', 'lag', 'unacked', 'consumers', 'last read', 'partitions', 'registered'];
      process.stdout.write(`${fittedTable(head, rows)}\n`);
    });

  address(groups.command('drop'))
    .description('drop an abandoned group from every partition and the registry, so outcomes it held can be trimmed')
    .argument('<group>', 'group name, as engines pass it to ConsumeOutcomes', nonEmpty)
    .option('--tenant <tenant>', "the tenant of a tenant's own group (without it, the group over every tenant)", nonEmpty)
    .option('--force', 'drop it even though a consumer read it in the last 10 minutes')
    .action(async (group: string, opts: CommonOptions & { tenant?: string; force?: boolean }) => {
      const r = await withClient(opts.address, (c) => c.dropOutcomeGroup(group, { tenant: opts.tenant, force: opts.force }));
      process.stdout.write(`dropped ${group}${opts.tenant ? ` of tenant ${opts.tenant}` : ''} from ${r.partitions} partitions` +
        ` (${r.pending} unacked outcomes it held will not be redelivered to it)\n`);
    });
}
