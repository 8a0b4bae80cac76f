/**
 * deploy/grafana/zdmatch.json reads its data from the data source variable
 * (docs/operations.md "Alert": variables data source, namespace, service,
 * job): a panel or variable pinned to one Grafana's data source uid shows
 * "data source not found" in every other Grafana the dashboard is imported to.
 */
import fs from 'node:fs';
import path from 'node:path';

interface Panel { title?: string; type?: string; datasource?: { type?: string; uid?: string }; targets?: { datasource?: { uid?: string } }[]; panels?: Panel[] }
interface Variable { name: string; type: string; query?: unknown; datasource?: { uid?: string } }

const dash = JSON.parse(fs.readFileSync(path.resolve(__dirname, '..', '..', 'deploy', 'grafana', 'zdmatch.json'), 'utf8')) as {
  panels: Panel[];
  templating: { list: Variable[] };
};

it('offers the documented variables: a Prometheus data source, namespace, service and job', () => {
  const vars = Object.fromEntries(dash.templating.list.map((v) => [v.name, v]));
  expect(Object.keys(vars).sort()).toEqual(['datasource', 'job', 'namespace', 'service']);
  expect(vars.datasource).toMatchObject({ type: 'datasource', query: 'prometheus' });
});

it('queries the chosen data source in every panel, target and variable', () => {
  const pinned: string[] = [];
  const walk = (ps: Panel[]) => {
    for (const p of ps) {
      if (p.type !== 'row' && p.datasource?.uid !== '${datasource}') pinned.push(`panel ${p.title}: ${JSON.stringify(p.datasource)}`);
      for (const t of p.targets ?? []) if (t.datasource && t.datasource.uid !== '${datasource}') pinned.push(`target of ${p.title}: ${JSON.stringify(t.datasource)}`);
      walk(p.panels ?? []);
    }
  };
  walk(dash.panels);
  for (const v of dash.templating.list) if (v.type === 'query' && v.datasource?.uid !== '${datasource}') pinned.push(`variable ${v.name}: ${JSON.stringify(v.datasource)}`);
  expect(pinned).toEqual([]);
});
