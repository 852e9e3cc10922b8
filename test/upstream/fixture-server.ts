// A real HTTP server answering with hand-written responses: the quirk fixtures and failure shapes (Retry-After,
// timeouts, write 5xx) that a faithful sandbox does not produce on demand. The client talks to it over the wire
// exactly as it talks to the service — nothing here replaces fetch.
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SeenRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: unknown;
}

export interface Reply {
  status?: number;
  headers?: Record<string, string>;
  body?: unknown;
  /** Hold the response this long (to trip the client's timeout). */
  delayMs?: number;
  /** Drop the connection without answering. */
  destroy?: boolean;
  /** Never answer (until the server closes): trips the client's timeout. */
  hang?: boolean;
}

export interface FixtureServer {
  url: string;
  requests: SeenRequest[];
  /** Requests the client gave up on: their connection closed before an answer was sent. */
  abandoned: SeenRequest[];
  /** Resolves once `check` holds, checked again as each request arrives or is abandoned: ordered by events. */
  until(check: () => boolean): Promise<void>;
  close(): Promise<void>;
}

export function fixture(name: string): unknown {
  return JSON.parse(readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8'));
}

export async function startFixtureServer(
  route: (req: SeenRequest) => Reply | Promise<Reply>,
): Promise<FixtureServer> {
  const requests: SeenRequest[] = [];
  const abandoned: SeenRequest[] = [];
  let waiters: { check: () => boolean; resolve: () => void }[] = [];
  const changed = () => {
    waiters = waiters.filter((w) => {
      if (!w.check()) return true;
      w.resolve();
      return false;
    });
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const url = new URL(req.url ?? '/', 'http://x');
      const text = Buffer.concat(chunks).toString('utf8');
      const seen: SeenRequest = {
        method: req.method ?? 'GET',
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        body: text === '' ? undefined : JSON.parse(text),
      };
      requests.push(seen);
      res.on('close', () => {
        if (res.writableFinished) return;
        abandoned.push(seen);
        changed();
      });
      changed();
      const reply = await route(seen);
      if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
      if (reply.hang) return;
      if (reply.destroy) {
        req.socket.destroy();
        return;
      }
      const body =
        reply.body === undefined
          ? ''
          : typeof reply.body === 'string'
            ? reply.body
            : JSON.stringify(reply.body);
      res.writeHead(reply.status ?? 200, {
        'content-type': typeof reply.body === 'string' ? 'text/plain' : 'application/json',
        ...reply.headers,
      });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    abandoned,
    until: (check) =>
      new Promise<void>((resolve) => {
        if (check()) resolve();
        else waiters.push({ check, resolve });
      }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
