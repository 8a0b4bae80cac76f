/**
 * A worker process of the chaos soak (chaos.test.ts), so that a worker can be
 * killed with SIGKILL mid-task like any other process. It runs the built SDK
 * (dist/) with the soak's handler and tells its parent, over IPC, every attempt
 * it starts before running it: the parent's count of runs per attempt survives
 * the kill; and the result of each, before returning it. It answers the soak's RPCs too (rpc-handler.js).
 *   node test/soak/worker-process.js <address> <appWorkerId> <methodTimeoutMs>
 */
'use strict';
const path = require('node:path');
const { Worker } = require(path.join(__dirname, '..', '..', 'dist'));
const rpcHandlers = require('./rpc-handler');

const [address, appWorkerId, methodTimeoutArg] = process.argv.slice(2);
const methodTimeoutMs = Number(methodTimeoutArg);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const quiet = { debug() {}, info() {}, warn() {}, error() {} };

const handler = async (ctx) => {
  process.send({ run: `${ctx.taskId}#${ctx.attempt}`, at: Date.now() });
  const dice = Math.random();
  // Hung past the method timeout, deaf to its signal: the attempt fails by the owner's timer.
  if (dice < 0.01) await sleep(methodTimeoutMs * 1.5);
  else await sleep(Math.floor(Math.random() * 10));
  if (dice > 0.97) throw new Error('a failure the retry policy takes');
  // The result is this run's alone (its task, a nonce, its attempt) and told before it is
  // returned, so an outcome holding any other run's result, or none, shows (outcome-results.ts).
  const result = `done ${ctx.taskId}/${Math.random().toString(36).slice(2, 10)} #${ctx.attempt}`;
  process.send({ result: `${ctx.taskId}#${ctx.attempt}`, output: result });
  return result;
};

const worker = new Worker({
  address, tenant: 'acme', appWorkerId, flowTypes: { order: { steps: { work: handler }, rpcs: rpcHandlers(appWorkerId) } },
  maxConcurrentTasks: 8, reservedRpcTasks: 0, logger: quiet, reconnectBackoff: { initialMs: 50, maxMs: 300 },
});
worker.start().catch((err) => {
  process.stderr.write(`soak worker ${appWorkerId}: ${err.message}\n`);
  process.exit(1);
});
// The soak starts its RPCs once every first worker is registered, not in the storm of
// process starts before that (chaos.test.ts).
worker.waitPullRegistered(AbortSignal.timeout(30_000)).then(() => process.send({ ready: appWorkerId }), () => {});
process.on('SIGTERM', () => {
  void worker.stop().then(() => process.exit(0));
});
process.on('disconnect', () => process.exit(0));
