/**
 * A TCP proxy on 127.0.0.1 that can stop forwarding: a peer that freezes (a
 * long GC pause, SIGSTOP, a full network) without closing its connection.
 * While paused it reads nothing from the client, so the client's HTTP/2
 * stream gets no window back and its writes wait, as they would for a frozen peer.
 */
import net from 'node:net';

export interface TcpProxy {
  port: number;
  /** Connections clients opened to the proxy so far (refused and held ones too). */
  readonly accepted: number;
  /** Stops reading from clients (their writes wait); the target's answers still flow. */
  pause(): void;
  /** Stops both directions: the peer says nothing either (a frozen node, a black-holing network). */
  freeze(): void;
  /**
   * freeze(), and a target that closes meanwhile does not close its client either: the
   * client hears nothing, not even the close (a network that black-holes the path).
   */
  blackhole(): void;
  /** Sends the connections made from now on to another port (a DNS name that moves to a new primary); open ones stay. */
  retarget(port: number): void;
  /** Undoes pause(), freeze(), blackhole() or refuse() (a client whose target closed meanwhile is closed now). */
  resume(): void;
  /** Closes the open connections at both ends (a network reset): what they held is lost; new ones are taken as before. */
  cut(): void;
  /** cut(), and connections opened from now on are reset at once (a peer's port refusing), until resume(). */
  refuse(): void;
  /** Connections opened from now on get no further than the proxy (a slow answer) until release(); open ones flow on. */
  holdNew(): void;
  /** Forwards the connections holdNew() held, and the new ones from now on. */
  release(): void;
  close(): Promise<void>;
}

export async function tcpProxy(targetPort: number): Promise<TcpProxy> {
  let currentTarget = targetPort;
  const pairs = new Set<{ client: net.Socket; target: net.Socket }>();
  let paused = false;
  let frozen = false;
  let holed = false;
  const gone = new Set<net.Socket>();
  let holding = false;
  let refusing = false;
  const held: net.Socket[] = [];
  let accepted = 0;
  const forward = (client: net.Socket) => {
    const target = net.connect(currentTarget, '127.0.0.1');
    const pair = { client, target };
    pairs.add(pair);
    // Only the directions that flow now are piped: resume() pipes the others, and a pipe made
    // here as well doubled every byte of a connection opened while paused or frozen.
    if (paused || frozen) client.pause();
    else client.pipe(target);
    if (frozen) target.pause();
    else target.pipe(client);
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      target.destroy();
    };
    const targetEnded = () => {
      if (!holed) return end();
      pairs.delete(pair);
      target.destroy();
      gone.add(client);
    };
    client.on('error', end).on('close', end);
    target.on('error', targetEnded).on('close', targetEnded);
  };
  const server = net.createServer((client) => {
    accepted++;
    if (refusing) {
      client.on('error', () => client.destroy());
      client.resetAndDestroy();
      return;
    }
    if (!holding) return forward(client);
    client.pause();
    client.on('error', () => client.destroy());
    held.push(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const proxy: TcpProxy = {
    port: (server.address() as net.AddressInfo).port,
    get accepted() {
      return accepted;
    },
    pause() {
      paused = true;
      for (const p of pairs) {
        p.client.unpipe(p.target);
        p.client.pause();
      }
    },
    freeze() {
      frozen = true;
      for (const p of pairs) {
        p.client.unpipe(p.target);
        p.target.unpipe(p.client);
        p.client.pause();
        p.target.pause();
      }
    },
    blackhole() {
      proxy.freeze();
      holed = true;
    },
    retarget(port) {
      currentTarget = port;
    },
    resume() {
      const wasFrozen = frozen;
      const wasStopped = paused || frozen;
      paused = false;
      frozen = false;
      holed = false;
      refusing = false;
      for (const c of gone) c.destroy();
      gone.clear();
      // Nothing was unpiped: piping again would send every byte twice (a client then reads two replies to one command).
      if (!wasStopped) return;
      for (const p of pairs) {
        p.client.pipe(p.target);
        p.client.resume();
        if (wasFrozen) {
          p.target.pipe(p.client);
          p.target.resume();
        }
      }
    },
    cut() {
      for (const p of [...pairs]) {
        pairs.delete(p);
        p.client.destroy();
        p.target.destroy();
      }
    },
    refuse() {
      refusing = true;
      proxy.cut();
    },
    holdNew() {
      holding = true;
    },
    release() {
      holding = false;
      for (const c of held.splice(0)) if (!c.destroyed) forward(c);
    },
    close: () => {
      for (const c of held.splice(0)) c.destroy();
      for (const c of gone) c.destroy();
      for (const p of pairs) {
        p.client.destroy();
        p.target.destroy();
      }
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return proxy;
}
