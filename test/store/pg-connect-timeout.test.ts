// A database that takes the connection and never answers (a dead host behind a load balancer, a half-open
// firewall): a store call fails within the pool's connection timeout, with an error that says so, instead of
// hanging. PostgreSQL's `connect_timeout` (seconds) in DATABASE_URL sets it; unset, 5 s.
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.ts';

let server: Server;
let port: number;
const sockets: Socket[] = [];

beforeAll(async () => {
  // Accepts, reads what it is sent, answers nothing.
  server = createServer((s) => {
    sockets.push(s);
    s.on('data', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

async function timed(url: string) {
  const store = await openStore({ databaseUrl: url, migrate: false });
  const began = Date.now();
  const err = await store.records.listSchools().then(
    () => null,
    (e: unknown) => e as Error,
  );
  const ms = Date.now() - began;
  await store.close().catch(() => {});
  return { err, ms };
}

describe('a black-holed PostgreSQL port', () => {
  it('connect_timeout=1: a store call fails after about 1 s, saying the database did not answer', async () => {
    const { err, ms } = await timed(`postgres://rostercal@127.0.0.1:${port}/rostercal?connect_timeout=1`);
    console.log(`store call against a black hole, connect_timeout=1: failed after ${ms} ms: ${err?.message}`);
    expect(err).not.toBeNull();
    expect(err!.message).toMatch(/did not answer within 1 s/);
    expect(err!.message).toContain(`127.0.0.1:${port}`);
    expect(ms).toBeGreaterThanOrEqual(900);
    expect(ms).toBeLessThan(10_000);
  }, 30_000);

  it('unset: the default bound, 5 s', async () => {
    const { err, ms } = await timed(`postgres://rostercal@127.0.0.1:${port}/rostercal`);
    console.log(`store call against a black hole, default: failed after ${ms} ms`);
    expect(err!.message).toMatch(/did not answer within 5 s/);
    expect(ms).toBeGreaterThanOrEqual(4_500);
    expect(ms).toBeLessThan(20_000);
  }, 40_000);
});
