#!/usr/bin/env node
/**
 * What the worker stream's gRPC costs alone: a nice-grpc server in a child
 * process serving WorkerTaskService.Connect with the real codecs, answering
 * each StepResult with a ResultAck that carries the next StepTask (what a busy
 * slot gets from a node), on 64 streams of one connection, as fast as the
 * client can go. Prints the server's CPU per round trip: the floor under a
 * node's CPU per Step, with no matching, Redis or metrics on it.
 * Usage: npm run build && node test/bench/grpc-echo.js [roundTrips=60000]
 */
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { fork } = require('node:child_process');
const { createServer, createChannel, createClient } = require('nice-grpc');

const dist = (p) => require(path.join(__dirname, '..', '..', 'dist', p));
const { WorkerTaskServiceDefinition } = dist('wire');
const { Channel } = dist('util/channel');

const STREAMS = 64;
const WARMUP = 5000;

function serve() {
  const server = createServer({ 'grpc.enable_channelz': 0 });
  let n = 0;
  server.add(WorkerTaskServiceDefinition, {
    async *connect(requests) {
      const out = new Channel();
      void (async () => {
        for await (const f of requests) {
          if (!f.step_result) continue;
          const now = Date.now();
          out.push({
            result_ack: {
              task_token: f.step_result.task_token, verdict: 1,
              next_task: {
                task_token: `tok-${(n++).toString(36)}`, task_id: '12-0123456789abcdef01234567', tenant: 'bench',
                flow_id: `f-${n}`, flow_type: 'bench', step_type: 'noop', step_execution_id: `s-${n}`, attempt: 1,
                input: Buffer.alloc(30, 1), enqueued_at_ms: now, started_at_ms: now,
              },
            },
          });
        }
        out.close();
      })();
      for await (const frame of out) yield frame;
    },
  });
  server.listen('127.0.0.1:0').then((port) => process.send(port));
}

function cpuSec(pid) {
  const rest = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(rest[11]) + Number(rest[12])) / 100;
}

async function main() {
  const total = Number(process.argv[2] ?? 60000);
  const child = fork(__filename, ['--serve'], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const port = await new Promise((resolve) => child.once('message', resolve));
  const client = createClient(WorkerTaskServiceDefinition, createChannel(`127.0.0.1:${port}`));
  let done = 0;
  let t0 = 0;
  let c0 = 0;
  await Promise.all(Array.from({ length: STREAMS }, async () => {
    const requests = new Channel();
    const responses = client.connect(requests)[Symbol.asyncIterator]();
    requests.push({ step_result: { task_token: 'first', output: Buffer.alloc(0) } });
    for (;;) {
      const r = await responses.next();
      if (r.done) break;
      if (++done === WARMUP) {
        t0 = Date.now();
        c0 = cpuSec(child.pid);
      }
      if (done >= total) {
        requests.close();
        break;
      }
      requests.push({ step_result: { task_token: r.value.result_ack.next_task.task_token, output: Buffer.alloc(0) } });
    }
  }));
  const measured = total - WARMUP;
  const result = {
    roundTrips: measured,
    roundTripsPerSec: Math.round(measured / ((Date.now() - t0) / 1000)),
    serverCpuUsecPerRoundTrip: Math.round(((cpuSec(child.pid) - c0) * 1e6 / measured) * 10) / 10,
  };
  child.kill();
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.exit(0);
}

if (process.argv[2] === '--serve') serve();
else main().catch((err) => {
  process.stderr.write(`${err.stack}\n`);
  process.exit(1);
});
