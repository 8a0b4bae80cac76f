/**
 * How the SDK resolves a credential to a bearer token (src/sdk/common/credentials.ts):
 * a string as it is, a function's answer, a file's trimmed text read again only when
 * the file changes; anything unusable fails with a CredentialError before a call is
 * sent. And the channel's keepalive and reconnect settings.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  authMetadata, createSdkChannel, CredentialError, metadataFor, resolveCredential,
} from '../../../src/sdk/common/credentials';

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zd-cred-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

it('resolves none, a string and a function, and refuses what is no token', async () => {
  expect(await resolveCredential(undefined)).toBe('');
  expect(await resolveCredential('')).toBe('');
  expect(await resolveCredential('abc.def')).toBe('abc.def');
  expect(await resolveCredential(async () => 'from-fn')).toBe('from-fn');
  await expect(resolveCredential(() => '')).rejects.toThrow(new CredentialError('credential function returned no token'));
  await expect(resolveCredential(() => { throw new Error('vault down'); })).rejects.toThrow('credential function failed: vault down');
  await expect(resolveCredential('has space')).rejects.toThrow(/printable ASCII without spaces/);
  await expect(resolveCredential(42 as never)).rejects.toThrow(new CredentialError('credential must be a string, { file }, or a function'));
});

it('reads a token file trimmed, again only once it changed, and refuses an empty or missing one', async () => {
  const file = path.join(dir, 'token');
  fs.writeFileSync(file, '  first-token\n');
  expect(await resolveCredential({ file })).toBe('first-token');
  const read = jest.spyOn(fs.promises, 'readFile');
  try {
    expect(await resolveCredential({ file })).toBe('first-token');
    expect(read).not.toHaveBeenCalled(); // unchanged: the cached token
    fs.writeFileSync(file, 'second-token-longer\n');
    expect(await resolveCredential({ file })).toBe('second-token-longer');
    // The same size, written again (a rotation to a token of the same length): the time tells.
    const stat = fs.statSync(file);
    fs.writeFileSync(file, 'third--token-longer\n');
    fs.utimesSync(file, stat.atime, new Date(stat.mtimeMs + 5_000));
    expect(await resolveCredential({ file })).toBe('third--token-longer');
  } finally {
    read.mockRestore();
  }
  fs.writeFileSync(file, ' \n');
  await expect(resolveCredential({ file })).rejects.toThrow(`credential file ${file}: is empty`);
  await expect(resolveCredential({ file: path.join(dir, 'nope') })).rejects.toThrow(/: ENOENT$/);
});

it('puts a bearer token in the metadata only when there is one', async () => {
  expect(metadataFor('').get('authorization')).toBeUndefined();
  expect((await authMetadata('tok')).get('authorization')).toBe('Bearer tok');
  expect((await authMetadata(undefined)).get('authorization')).toBeUndefined();
});

describe('an SDK channel', () => {
  // The options grpc-js's channel was made with (its internal channel keeps them; no public reader).
  const optionsOf = (ch: ReturnType<typeof createSdkChannel>) =>
    (ch as unknown as { internalChannel: { options: Record<string, unknown> } }).internalChannel.options;

  it('pings no slower than its keepalive, and redials on the SDK backoff', () => {
    const ch = createSdkChannel('127.0.0.1:1', undefined, 2_000);
    try {
      expect(optionsOf(ch)).toMatchObject({
        'grpc.keepalive_time_ms': 2_000, 'grpc.keepalive_timeout_ms': 2_000,
        'grpc.initial_reconnect_backoff_ms': 100, 'grpc.max_reconnect_backoff_ms': 10_000,
      });
    } finally {
      ch.close();
    }
  });
});
