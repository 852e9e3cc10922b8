// Runs the app on a port with graceful shutdown: stop accepting, let requests in flight finish (keep-alive
// connections are closed when idle), and cut whatever is left after the grace period.
import { createServer, type Server, type ServerResponse, STATUS_CODES } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Express } from 'express';

/**
 * Node's parser answers a request it cannot read (a malformed request line or header, headers over its limit, a
 * request too slow to arrive) by itself, bare. This answer is the same, with the security headers every other
 * answer carries.
 */
function answerUnreadable(pairs: readonly [string, string][]) {
  return (err: Error & { code?: string }, socket: Socket) => {
    const response = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (!socket.writable || response?.headersSent || err.code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    const status =
      err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    const body = `${STATUS_CODES[status]}\n`;
    const head = [
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}`,
      'Connection: close',
      'Content-Type: text/plain; charset=utf-8',
      `Content-Length: ${Buffer.byteLength(body)}`,
      'Cache-Control: no-store',
      ...pairs.map(([k, v]) => `${k}: ${v}`),
    ];
    socket.end(`${head.join('\r\n')}\r\n\r\n${body}`);
  };
}

/**
 * Once stopping, every answer not yet begun says `Connection: close` and its connection ends with it: otherwise a
 * keep-alive client whose request was in flight holds the stop until the grace period (measured: 5.0 s of a 5-s
 * grace for one 0.4-s request). Returns what starts the stop.
 */
function closeWhenAnswered(server: Server): () => void {
  const open = new Set<ServerResponse>();
  let stopping = false;
  server.on('request', (_req, res: ServerResponse) => {
    if (stopping) res.shouldKeepAlive = false;
    open.add(res);
    res.once('close', () => open.delete(res));
  });
  return () => {
    stopping = true;
    for (const res of open) if (!res.headersSent) res.shouldKeepAlive = false;
  };
}

export interface RunningServer {
  server: Server;
  /** `http://host:port` as bound (port 0 resolves to the real one). */
  url: string;
  port: number;
  /** Graceful stop; resolves when every connection is closed. */
  close(graceMs?: number): Promise<void>;
}

/** Node's `listen EADDRINUSE: address already in use 0.0.0.0:8080` says what, not what to do. */
function listenError(err: NodeJS.ErrnoException, port: number, setting: string): Error {
  const change =
    setting === 'PORT'
      ? 'choose another with PORT (or `rostercal serve --port N`)'
      : `choose another with ${setting}`;
  if (err.code === 'EADDRINUSE')
    return new Error(
      `port ${port} is already in use by another program (another rostercal serve?): stop that program, or ${change}`,
    );
  if (err.code === 'EACCES')
    return new Error(
      `port ${port} may not be opened by this user (ports below 1024 need privileges): ${change}, e.g. 8080`,
    );
  return err;
}

export function startServer(
  app: Express,
  opts: {
    port?: number;
    host?: string;
    keepAliveTimeoutMs?: number;
    /**
     * How long a client may take to send its headers, and how often Node looks for one that is too slow (it is
     * answered 408 and cut). Node's own defaults (60 s, every 30 s) unless given; tests give small ones.
     */
    headersTimeoutMs?: number;
    connectionsCheckingIntervalMs?: number;
    /** The setting that chose the port, for a message when it cannot be opened. Default PORT. */
    portSetting?: string;
  } = {},
): Promise<RunningServer> {
  return new Promise((resolve, reject) => {
    const port = opts.port ?? 8080;
    // Made here rather than by app.listen: the checking interval can only be set when the server is created.
    const server = createServer(
      {
        ...(opts.headersTimeoutMs !== undefined && { headersTimeout: opts.headersTimeoutMs }),
        ...(opts.connectionsCheckingIntervalMs !== undefined && {
          connectionsCheckingInterval: opts.connectionsCheckingIntervalMs,
        }),
      },
      app,
    );
    server.listen(port, opts.host ?? '0.0.0.0');
    server.keepAliveTimeout = opts.keepAliveTimeoutMs ?? 65_000;
    server.on('clientError', answerUnreadable(app.locals.securityHeaders ?? []));
    const stopping = closeWhenAnswered(server);
    const failed = (err: NodeJS.ErrnoException) => reject(listenError(err, port, opts.portSetting ?? 'PORT'));
    server.once('error', failed);
    server.once('listening', () => {
      server.off('error', failed);
      const addr = server.address() as AddressInfo;
      const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
      const shownHost = host === '0.0.0.0' || host === '[::]' ? 'localhost' : host;
      let closing: Promise<void> | null = null;
      resolve({
        server,
        port: addr.port,
        url: `http://${shownHost}:${addr.port}`,
        close(graceMs = 10_000) {
          closing ??= new Promise<void>((done) => {
            stopping();
            const timer = setTimeout(() => server.closeAllConnections(), graceMs);
            timer.unref();
            server.close(() => {
              clearTimeout(timer);
              done();
            });
            server.closeIdleConnections();
          });
          return closing;
        },
      });
    });
  });
}
