/**
 * Each alert judges one cluster, its namespace and service (docs/operations.md
 * "Alert"): two releases in one namespace are told apart by the metrics
 * Service. An aggregation that drops either label sums or compares the two
 * clusters as one (a node of one counted among the other's, one's lag added to
 * the other's). The unit tests in zdmatch-rules.test.yaml try two releases on
 * some of the rules; this holds every aggregation of every rule.
 */
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';

const rules = (YAML.parse(fs.readFileSync(path.resolve(__dirname, '..', '..', 'deploy', 'prometheus', 'zdmatch-rules.yaml'), 'utf8')) as {
  groups: { rules: { alert: string; expr: string }[] }[];
}).groups.flatMap((g) => g.rules);

const AGGREGATIONS = /\b(sum|max|min|count|avg|topk|bottomk|quantile|stddev|stdvar|group)\s*(by|without)?\s*(\(([^()]*)\))?\s*\(/g;

it('keeps namespace and service in every aggregation of every alert rule', () => {
  expect(rules.length).toBeGreaterThan(15);
  const merged: string[] = [];
  for (const { alert, expr } of rules) {
    for (const m of expr.matchAll(AGGREGATIONS)) {
      const [, op, mode, , labels] = m;
      const kept = mode === 'by' ? labels!.split(',').map((l) => l.trim()) : [];
      if (mode === 'without' || !kept.includes('namespace') || !kept.includes('service')) merged.push(`${alert}: ${op} ${mode ?? ''}(${labels ?? ''})`);
    }
  }
  expect(merged).toEqual([]);
});
