/**
 * The Client's TLS options against a real nice-grpc server (127.0.0.1:0) that
 * requires a client certificate: mutual TLS with `{ ca, cert, key }`, given as
 * files or bytes, and an `https://` address.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ServerCredentials } from '@grpc/grpc-js';
import { createServer, ServerError, Status, type Server } from 'nice-grpc';
import { MatchingServiceDefinition } from '../../../src/wire';
import { Client } from '../../../src';
import { makeCerts, type TestCerts } from '../../helpers/certs';

describe('Client TLS options', () => {
  let server: Server;
  let port: number;
  let certs: TestCerts;
  let dir: string;
  const clients: Client[] = [];
  const client = (c: Client) => (clients.push(c), c);

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zd-sdk-tls-'));
    // One certificate for both ends: it carries clientAuth too.
    certs = makeCerts(dir, { cn: '127.0.0.1', san: 'IP:127.0.0.1,DNS:localhost', clientAuth: true });
    server = createServer();
    const unimplemented = () => {
      throw new ServerError(Status.UNIMPLEMENTED, 'not here');
    };
    server.add(MatchingServiceDefinition, {
      ...Object.fromEntries(Object.keys(MatchingServiceDefinition).map((m) => [m, unimplemented])),
      describeCluster: async () => ({ partitions: 7, nodes: [], partition_owners: [] }),
    } as never);
    const creds = ServerCredentials.createSsl(
      fs.readFileSync(certs.ca),
      [{ cert_chain: fs.readFileSync(certs.cert), private_key: fs.readFileSync(certs.key) }],
      true, // a client without a certificate the CA signed is refused
    );
    port = await server.listen('127.0.0.1:0', creds);
  });

  afterAll(async () => {
    for (const c of clients) c.close();
    await server.shutdown();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('presents its certificate and key (mutual TLS), given as file paths', async () => {
    const c = client(new Client({ address: `127.0.0.1:${port}`, tls: { ca: certs.ca, cert: certs.cert, key: certs.key } }));
    expect((await c.describeCluster()).partitions).toBe(7);
  });

  it('takes the PEM bytes as well as paths', async () => {
    const read = (f: string) => fs.readFileSync(f);
    const c = client(new Client({ address: `127.0.0.1:${port}`, tls: { ca: read(certs.ca), cert: read(certs.cert), key: read(certs.key) } }));
    expect((await c.describeCluster()).partitions).toBe(7);
  });

  it('dials an https:// address as host:port', async () => {
    const c = client(new Client({ address: `https://127.0.0.1:${port}`, tls: { ca: certs.ca, cert: certs.cert, key: certs.key } }));
    expect((await c.describeCluster()).partitions).toBe(7);
  });

  it('is refused by the server without a client certificate', async () => {
    const c = client(new Client({ address: `127.0.0.1:${port}`, tls: { ca: certs.ca }, defaultTimeoutMs: 2000 }));
    await expect(c.describeCluster()).rejects.toBeDefined();
  });
});
