/**
 * A credential that can never resolve to a token is refused when the Worker
 * or client is built, naming the option. It used to be accepted: a Worker
 * then failed every stream before sending anything and redialled with backoff
 * for ever (waitPullRegistered just waited), and every call of a client
 * failed. The commonest case is a token read from a file by hand, which keeps
 * the file's trailing newline.
 */
import { Client, FetchClient, TerminalTasksClient, type Credential } from '../../../src';
import { compileWorkerOptions, type WorkerOptions } from '../../../src/sdk/worker/options';
import { recordingLogger } from './fake-worker-server';

const worker = (credential: unknown): WorkerOptions => ({
  address: '127.0.0.1:1', tenant: 't1', flowTypes: { order: { steps: { charge: () => 'ok' } } }, logger: recordingLogger(),
  credential: credential as Credential,
});

const refused: Array<[string, unknown, RegExp]> = [
  ['a token with its file\'s trailing newline', 'secret-token\n', /the token must be printable ASCII without spaces/],
  ['a token with a space', 'Bearer secret', /the token must be printable ASCII without spaces/],
  ['{ path } for { file }', { path: '/run/token' }, /must be a token string, \{ file \} or a function, got object/],
  ['{ file } without a path', { file: '' }, /must be a token string, \{ file \} or a function/],
  ['a number', 42, /must be a token string, \{ file \} or a function, got number/],
];

describe.each(refused)('a credential that is %s', (_what, credential, reason) => {
  it('is refused by the Worker, naming the option', () => {
    expect(() => compileWorkerOptions(worker(credential))).toThrow(new RegExp(`^Worker option credential: ${reason.source}`));
  });

  it('is refused by Client, FetchClient and TerminalTasksClient, naming the option', () => {
    const c = credential as Credential;
    expect(() => new Client({ address: '127.0.0.1:1', credential: c })).toThrow(new RegExp(`^Client option credential: ${reason.source}`));
    expect(() => new FetchClient({ address: '127.0.0.1:1', workerId: 'A', credential: c })).toThrow(new RegExp(`^FetchClient option credential: ${reason.source}`));
    expect(() => new TerminalTasksClient({ address: '127.0.0.1:1', credential: c })).toThrow(new RegExp(`^TerminalTasksClient option credential: ${reason.source}`));
  });
});

it('takes a token, { file }, a function, an empty string or none', () => {
  for (const credential of ['secret-token', { file: '/run/token' }, () => 'secret-token', '', undefined]) {
    expect(compileWorkerOptions(worker(credential)).credential).toBe(credential);
    new Client({ address: '127.0.0.1:1', credential: credential as Credential }).close();
    new FetchClient({ address: '127.0.0.1:1', workerId: 'A', credential: credential as Credential }).close();
  }
});

it('takes a token of up to 4096 characters, as a header value carries it, and refuses one longer', () => {
  expect(compileWorkerOptions(worker('a'.repeat(4096))).credential).toBe('a'.repeat(4096));
  expect(() => compileWorkerOptions(worker('a'.repeat(4097)))).toThrow(/^Worker option credential: the token must be printable ASCII/);
});
