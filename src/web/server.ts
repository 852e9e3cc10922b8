// Runs the app on a port with graceful shutdown: stop accepting, let requests in flight finish (keep-alive
// connections are closed when idle), and cut whatever is left after the grace period.
import { type Server, STATUS_CODES } from 'node:http';
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
    /** The setting that chose the port, for a message when it cannot be opened. Default PORT. */
    portSetting?: string;
  } = {},
): Promise<RunningServer> {
  return new Promise((resolve, reject) => {
    const port = opts.port ?? 8080;
    const server = app.listen(port, opts.host ?? '0.0.0.0');
    server.keepAliveTimeout = opts.keepAliveTimeoutMs ?? 65_000;
    server.on('clientError', answerUnreadable(app.locals.securityHeaders ?? []));
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
