// Runs the app on a port with graceful shutdown: stop accepting, let requests in flight finish (keep-alive
// connections are closed when idle), and cut whatever is left after the grace period.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';

export interface RunningServer {
  server: Server;
  /** `http://host:port` as bound (port 0 resolves to the real one). */
  url: string;
  port: number;
  /** Graceful stop; resolves when every connection is closed. */
  close(graceMs?: number): Promise<void>;
}

export function startServer(
  app: Express,
  opts: { port?: number; host?: string; keepAliveTimeoutMs?: number } = {},
): Promise<RunningServer> {
  return new Promise((resolve, reject) => {
    const server = app.listen(opts.port ?? 8080, opts.host ?? '0.0.0.0');
    server.keepAliveTimeout = opts.keepAliveTimeoutMs ?? 65_000;
    server.once('error', reject);
    server.once('listening', () => {
      server.off('error', reject);
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
