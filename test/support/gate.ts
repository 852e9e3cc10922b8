// An HTTP proxy in front of an upstream that can hold every request until it is opened again: a test orders a
// race by events ("a pull is inside its first request") instead of by sleeps or latency.
import { once } from 'node:events';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Gate {
  url: string;
  /** Requests arriving from now on wait. */
  close(): void;
  /** Lets every waiting request through, and those to come. */
  open(): void;
  /** Resolves when a request is waiting at the closed gate (at once when one already is). */
  held(): Promise<void>;
  stop(): Promise<void>;
}

export async function startGate(target: string): Promise<Gate> {
  const upstream = new URL(target);
  let closed = false;
  let waiting: (() => void)[] = [];
  let onHeld: (() => void)[] = [];
  const server = createServer((req, res) => {
    const forward = () => {
      const out = request(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: req.url,
          headers: req.headers,
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      out.on('error', () => res.destroy());
      req.pipe(out);
    };
    if (!closed) return forward();
    waiting.push(forward);
    for (const f of onHeld) f();
    onHeld = [];
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${upstream.pathname === '/' ? '' : upstream.pathname}`,
    close: () => {
      closed = true;
    },
    open: () => {
      closed = false;
      const go = waiting;
      waiting = [];
      for (const f of go) f();
    },
    held: () =>
      waiting.length > 0
        ? Promise.resolve()
        : new Promise<void>((resolve) => {
            onHeld.push(resolve);
          }),
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
