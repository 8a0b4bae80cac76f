// Validates Kubernetes objects against kubernetes-models and
// @kubernetes-models/prometheus-operator (both ESM, so this runs as its own
// node process). stdin: a JSON array of objects. stdout: a JSON array of
// { kind, name, errors } (errors null when valid).
const MODULES = {
  'monitoring.coreos.com/v1': '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1',
};
const chunks = [];
for await (const c of process.stdin) chunks.push(c);
const objects = JSON.parse(Buffer.concat(chunks).toString('utf8'));
const results = [];
for (const obj of objects) {
  const { apiVersion, kind } = obj;
  const name = obj.metadata?.name;
  let errors = null;
  try {
    const mod = await import(MODULES[apiVersion] ?? `kubernetes-models/${apiVersion}`);
    const Model = mod[kind];
    if (typeof Model !== 'function') throw new Error(`no model for ${apiVersion} ${kind}`);
    new Model(obj).validate();
  } catch (err) {
    errors = String(err?.message ?? err);
  }
  results.push({ kind, name, errors });
}
process.stdout.write(JSON.stringify(results));
