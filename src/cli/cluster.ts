import type { Command } from 'commander';
import { withClient } from './client';
import { fittedTable, jsonReplacer } from './format';

interface ClusterOptions {
  address: string;
  json?: boolean;
  partitions?: boolean;
}

/** `zdmatch cluster`: nodes, how many partitions each owns, and (with --partitions) every owner and epoch. */
export function registerCluster(program: Command): void {
  program
    .command('cluster')
    .description('show the nodes of the cluster, partition owners and lease epochs')
    .option('--address <host:port>', 'gRPC API address of any node', '127.0.0.1:8801')
    .option('--partitions', 'list every partition with its owner and epoch')
    .option('--json', 'print JSON')
    .action(async (opts: ClusterOptions) => {
      const info = await withClient(opts.address, (c) => c.describeCluster());
      if (opts.json) {
        process.stdout.write(`${JSON.stringify(info, jsonReplacer, 2)}\n`);
        return;
      }
      const nodes = info.nodes.map((n) => [n.nodeId, n.address, String(n.ownedPartitions), n.lastHeartbeat?.toISOString() ?? '']);
      const unowned = info.partitionOwners.filter((p) => !p.owner).length;
      process.stdout.write(`${info.partitions} partitions, ${info.nodes.length} live nodes${unowned ? `, ${unowned} partitions without an owner` : ''}\n`);
      process.stdout.write(`${fittedTable(['node', 'peer address', 'partitions', 'last heartbeat'], nodes)}\n`);
      if (opts.partitions) {
        const parts = info.partitionOwners.map((p) => [String(p.partition), p.owner || '-', String(p.epoch)]);
        process.stdout.write(`${fittedTable(['partition', 'owner', 'epoch'], parts)}\n`);
      }
    });
}
