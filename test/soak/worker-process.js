/**
 * A worker process of the chaos soak (chaos.test.ts), so that a worker can be
 * killed with SIGKILL mid-task like any other process. It runs the built SDK
 * (dist/) with the soak's handler and tells its parent, over IPC, every attempt
 * it starts before running it: the parent's count of runs per attempt survives
 * the kill. It answers the soak's RPCs too (rpc-handler.js).
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
  // The result names its attempt, so a late one recorded under another attempt shows.
  return `done ${ctx.stepExecutionId} #${ctx.attempt}`;
};

const worker = new Worker({
  address, tenant: 'acme', appWorkerId, flowTypes: { order: { steps: { work: handler }, rpcs: rpcHandlers(appWorkerId) } },
  maxConcurrentTasks: 8, reservedRpcTasks: 0, logger: quiet, reconnectBackoff: { initialMs: 50, maxMs: 300 },
});
worker.start().catch((err) => {
  process.stderr.write(`soak worker ${appWorkerId}: ${err.message}\n`);
  process.exit(1);
});
process.on('SIGTERM', () => {
  void worker.stop().then(() => process.exit(0));
});
process.on('disconnect', () => process.exit(0));
