/** The SDKs and the server name the protocol version header the same way. */
import { Metadata } from 'nice-grpc';
import { PROTOCOL_CHECK_EXEMPT, PROTOCOL_VERSION_HEADER as SERVER_HEADER, protocolMiddleware } from '../../src/api/protocol-middleware';
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

describe('the protocol check of a call', () => {
  /** Runs the check for a call to `path` with these header values; resolves 'ran' once the handler ran. */
  async function check(values: string[], path = '/zdmatch.v1.MatchingService/Enqueue', options: Parameters<typeof protocolMiddleware>[0] = { min: 3, max: 5 }) {
    const metadata = Metadata();
    for (const v of values) metadata.append(SERVER_HEADER, v);
    const call = {
      method: { path, requestStream: false, responseStream: false, options: {} }, requestStream: false, responseStream: false, request: {},
      // eslint-disable-next-line require-yield
      next: async function* () { return 'ran'; },
    };
    const gen = protocolMiddleware(options)(call as never, { metadata } as never);
    return (await gen.next()).value;
  }

  it('lets a caller without the header, or with supported versions, through', async () => {
    expect(await check([])).toBe('ran');
    expect(await check(['3', ' 5 '])).toBe('ran');
    expect(await check(['4, 5'])).toBe('ran'); // a header sent twice, joined by HTTP/2
  });

  it('refuses a version below or above the range served, in any part, naming it', async () => {
    await expect(check(['2'])).rejects.toThrow(/version 2 is not supported; this server speaks protocol version 4/);
    await expect(check(['6'])).rejects.toThrow(/version 6 is not supported/);
    await expect(check(['4, 6'])).rejects.toThrow(/version 6 is not supported/);
    await expect(check(['4', '2'])).rejects.toThrow(/version 2 is not supported/);
  });

  it('refuses text that is not a version, quoting it trimmed and cut short', async () => {
    await expect(check(['v4'])).rejects.toThrow(/version "v4" is not supported/);
    await expect(check(['0000000004'])).rejects.toThrow(/version "0000000004" is not supported/);
    await expect(check([` ${'x'.repeat(40)}`])).rejects.toThrow(new RegExp(`version "${'x'.repeat(32)}" is not supported`));
  });

  it('leaves health checks under the exempt prefix alone, and serves the build\'s range by default', async () => {
    expect(await check(['99'], '/grpc.health.v1.Health/Check')).toBe('ran');
    expect(await check(['99'], '/grpc.health.v1.Health/Watch')).toBe('ran');
    await expect(check(['99'], '/zdmatch.v1.MatchingService/Enqueue', {})).rejects.toThrow(/version 99/);
    expect(await check([String(PROTOCOL_VERSION)], '/zdmatch.v1.MatchingService/Enqueue', {})).toBe('ran');
  });
});
