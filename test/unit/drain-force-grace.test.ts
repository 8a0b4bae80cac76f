/**
 * `zdmatch serve` forces its exit FORCE_GRACE_MS past drain.timeout; the Helm
 * chart refuses a terminationGracePeriodSeconds shorter than preStop +
 * drain.timeout + that grace, and docs/operations.md "Drain" promises the
 * same 10 s (45 s = 5 + 30 + 10). Should the node's grace grow alone, the
 * kubelet would SIGKILL a node still releasing its leases.
 */
import fs from 'node:fs';
import path from 'node:path';
import { FORCE_GRACE_MS } from '../../src/cli/serve';

const ROOT = path.resolve(__dirname, '..', '..');

it('forces a stuck drain out at the grace the chart and the docs count on', () => {
  const deployment = fs.readFileSync(path.join(ROOT, 'deploy', 'helm', 'zdmatch', 'templates', 'deployment.yaml'), 'utf8');
  const chartGrace = /\$forceGrace := (\d+)/.exec(deployment)?.[1];
  expect(Number(chartGrace) * 1000).toBe(FORCE_GRACE_MS);
  const ops = fs.readFileSync(path.join(ROOT, 'docs', 'operations.md'), 'utf8').replace(/\s+/g, ' ');
  expect(ops).toContain(`by itself ${FORCE_GRACE_MS / 1000} s past \`drain.timeout\``);
  expect(ops).toContain(`(45 s = 5 + 30 + ${FORCE_GRACE_MS / 1000})`);
});
