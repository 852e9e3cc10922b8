// A reverse proxy for the tests, doing what nginx does with `proxy_set_header X-Forwarded-For
// $proxy_add_x_forwarded_for`: it appends the address that connected to it to whatever X-Forwarded-For the client
// sent, and connects onwards from an address of its own. On loopback, 127.0.0.0/8 gives each party its own address.
import {
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReverseProxy {
  url: string;
  close(): Promise<void>;
}

export async function reverseProxy(
  target: string,
  opts: {
    listen?: string;
    from?: string;
    /** Answers a request itself instead of passing it on (returns true when it did): a broken endpoint. */
    intercept?: (req: IncomingMessage, res: ServerResponse) => boolean;
    /** Rewrites the answer's `Date` header (undefined: sent without one): an upstream whose clock lies. */
    date?: (upstream: string | undefined, req: IncomingMessage) => string | undefined;
  } = {},
): Promise<ReverseProxy> {
  const to = new URL(target);
  const server: Server = createServer((req, res) => {
    if (opts.intercept?.(req, res)) return;
    const seen = req.headers['x-forwarded-for'];
    const forwarded = [seen, req.socket.remoteAddress].filter(Boolean).join(', ');
    const upstream = httpRequest(
      {
        host: to.hostname,
        port: to.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, 'x-forwarded-for': forwarded },
        localAddress: opts.from ?? '127.0.0.1',
      },
      (answer) => {
        const headers = { ...answer.headers };
        if (opts.date) {
          res.sendDate = false;
          const date = opts.date(answer.headers.date, req);
          if (date === undefined) delete headers.date;
          else headers.date = date;
        }
        res.writeHead(answer.statusCode ?? 502, headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, opts.listen ?? '127.0.0.1', resolve));
  const { address, port } = server.address() as AddressInfo;
  return {
    url: `http://${address}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** One request from a chosen local address (127.0.0.2 is a different client than 127.0.0.1). */
export function requestFrom(
  from: string,
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      { method: init.method ?? 'GET', headers: init.headers ?? {}, localAddress: from, agent: false },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          body += d;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end(init.body);
  });
}
