/** The SDKs and the server name the protocol version header the same way. */
import { PROTOCOL_CHECK_EXEMPT, PROTOCOL_VERSION_HEADER as SERVER_HEADER } from '../../src/api/protocol-middleware';
import { PROTOCOL_VERSION_HEADER as SDK_HEADER } from '../../src/sdk/common';
import { compileWorkerOptions, type WorkerOptions } from '../../src/sdk/worker/options';
import { PONG_INTERVAL_MS } from '../../src';
import { PROTOCOL_VERSION } from '../../src/wire';

it('uses one header name on both sides, lower-case as HTTP/2 requires', () => {
  expect(SDK_HEADER).toBe(SERVER_HEADER);
  expect(SDK_HEADER).toBe(SDK_HEADER.toLowerCase());
  expect(PROTOCOL_CHECK_EXEMPT).toEqual(['/grpc.health.v1.Health/']);
});

it('sends the build protocol version and a 20 s Pong cadence unless the internal knobs say otherwise', () => {
  const base: WorkerOptions = { address: 'x:1', tenant: 't', flowTypes: { f: {} }, maxConcurrentTasks: 2, logger: { debug() {}, info() {}, warn() {}, error() {} } };
  expect(compileWorkerOptions(base)).toMatchObject({ protocolVersion: PROTOCOL_VERSION, pongIntervalMs: 20_000 });
  expect(PONG_INTERVAL_MS).toBe(20_000);
  expect(compileWorkerOptions({ ...base, _internal: { protocolVersion: 99, pongIntervalMs: 50 } }))
    .toMatchObject({ protocolVersion: 99, pongIntervalMs: 50 });
  expect(() => compileWorkerOptions({ ...base, _internal: { pongIntervalMs: 0 } })).toThrow(/_internal.pongIntervalMs/);
});
