// startServer from outside, over raw sockets: a client too slow to send its headers is answered 408 (with the
// security headers every answer carries) and cut, a slow but timely one is served, a taken port is named with what
// to do, and a graceful stop lets a request in flight finish.
import { connect } from 'node:net';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { securityHeaderPairs } from '../../src/web/security.ts';
import { type RunningServer, startServer } from '../../src/web/server.ts';

const running: RunningServer[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.close(100)));
});

function tinyApp(): express.Express {
  const app = express();
  app.locals.securityHeaders = securityHeaderPairs({ hsts: false });
  app.get('/', (_req, res) => {
    res.type('text').send('hello\n');
  });
  app.get('/slow', (_req, res) => {
    setTimeout(() => res.type('text').send('finished\n'), 400);
  });
  return app;
}

async function serveTiny(opts: Parameters<typeof startServer>[1] = {}): Promise<RunningServer> {
  const s = await startServer(tinyApp(), { port: 0, host: '127.0.0.1', ...opts });
  running.push(s);
  return s;
}

/** Writes the request's pieces with pauses between them; the raw answer once the server closes, and when. */
function rawRequest(port: number, pieces: string[], pauseMs: number): Promise<{ text: string; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.on('data', (d) => {
      text += d.toString('latin1');
    });
    socket.on('error', reject);
    socket.on('close', () => resolve({ text, ms: Date.now() - started }));
    let i = 0;
    const next = () => {
      const piece = pieces[i++];
      if (piece === undefined) return;
      if (!socket.destroyed) socket.write(piece);
      setTimeout(next, pauseMs);
    };
    next();
  });
}

function head(text: string): { status: number; headers: Record<string, string> } {
  const [block = ''] = text.split('\r\n\r\n');
  const [statusLine = '', ...lines] = block.split('\r\n');
  const headers = Object.fromEntries(
    lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
  );
  return { status: Number(statusLine.split(' ')[1]), headers };
}

describe('a client too slow to send its headers', () => {
  it('is answered 408 with the security headers, and cut', async () => {
    const s = await serveTiny({ headersTimeoutMs: 300, connectionsCheckingIntervalMs: 50 });
    // Half a request, then nothing: the answer must come from the server's clock, not from the client closing.
    const r = await rawRequest(s.port, ['GET / HTTP/1.1\r\nHost: x\r\n'], 5_000);
    const { status, headers } = head(r.text);
    expect(status, r.text).toBe(408);
    expect(headers.connection).toBe('close');
    expect(headers['x-content-type-options']).toBe('nosniff');
    expect(headers['referrer-policy']).toBe('no-referrer');
    expect(headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(r.ms).toBeLessThan(3_000);
  });

  it('one slow but within the limit is served', async () => {
    const s = await serveTiny({ headersTimeoutMs: 1_500, connectionsCheckingIntervalMs: 50 });
    const r = await rawRequest(
      s.port,
      ['GET / HTTP/1.1\r\n', 'Host: x\r\n', 'Connection: close\r\n\r\n'],
      200,
    );
    expect(head(r.text).status, r.text).toBe(200);
    expect(r.text).toContain('hello');
  });
});

describe('a port already taken', () => {
  it('is named with what to do, not as a bare EADDRINUSE', async () => {
    const first = await serveTiny();
    await expect(
      startServer(tinyApp(), { port: first.port, host: '127.0.0.1', portSetting: 'METRICS_PORT' }),
    ).rejects.toThrow(`port ${first.port} is already in use by another program`);
    await expect(startServer(tinyApp(), { port: first.port, host: '127.0.0.1' })).rejects.toThrow(
      'rostercal serve --port N',
    );
  });
});

describe('a graceful stop', () => {
  /**
   * Starts the tiny server, sends a raw request (`pieces`, `pauseMs` apart), and once it is in flight stops the
   * server with `graceMs`: the server, the raw answer to come, and how long the stop took.
   */
  async function stopWithRequestInFlight(pieces: string[], pauseMs: number, graceMs: number) {
    const s = await serveTiny();
    const answer = rawRequest(s.port, pieces, pauseMs);
    await new Promise((r) => setTimeout(r, 100));
    running.splice(running.indexOf(s), 1);
    const t0 = Date.now();
    await s.close(graceMs);
    return { s, answer, stopMs: Date.now() - t0 };
  }

  it('lets a request in flight finish, closes its keep-alive connection then, and refuses new ones', async () => {
    const { s, answer, stopMs } = await stopWithRequestInFlight(
      ['GET /slow HTTP/1.1\r\nHost: x\r\n\r\n'],
      10,
      5_000,
    );
    // Not the grace period: the answer says the connection closes, and it does once the answer is out.
    expect(stopMs).toBeLessThan(2_000);
    const r = await answer;
    expect(head(r.text).status, r.text).toBe(200);
    expect(head(r.text).headers.connection).toBe('close');
    expect(r.text).toContain('finished');
    await expect(
      new Promise((resolve, reject) =>
        connect(s.port, '127.0.0.1').on('connect', resolve).on('error', reject),
      ),
    ).rejects.toThrow(/ECONNREFUSED/);
  });

  it('cuts what is still open after the grace period', async () => {
    // A keep-alive client that never finishes its request: only the grace timer ends it.
    const { answer, stopMs } = await stopWithRequestInFlight(['GET / HTTP/1.1\r\nHost: x\r\n'], 10_000, 300);
    expect(stopMs).toBeLessThan(2_000);
    expect((await answer).ms).toBeLessThan(3_000);
  });
});
