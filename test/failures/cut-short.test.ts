// An answer cut short between the upstream and us (a proxy hiccup): the real `rostercal sync` pulls through a
// tiny proxy in front of the sandbox that cuts one listing page in half, either ending the body cleanly there (a
// 200 whose JSON is incomplete) or dropping the connection mid-body. A read is asked again either way, within the
// retry bounds, so the pull succeeds; a write that was answered is never repeated (test/upstream/transport.test.ts).

import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { rostercal, schoolEnv } from '../support/cli.ts';
import { startWeekSandbox } from '../support/clock.ts';

type Cut = 'clean' | 'drop';

interface CuttingProxy {
  url: string;
  /** Cuts the next answer whose path ends with `suffix`, once per entry, in order. */
  cuts: { suffix: string; how: Cut; done?: boolean }[];
  /** Paths requested, in order. */
  seen: string[];
  close(): Promise<void>;
}

async function startCuttingProxy(upstream: string): Promise<CuttingProxy> {
  const proxy: Omit<CuttingProxy, 'url' | 'close'> = { cuts: [], seen: [] };
  const server: Server = createServer(async (req, res) => {
    const path = req.url ?? '/';
    proxy.seen.push(path.split('?')[0]!);
    const answer = await fetch(upstream + path, {
      method: req.method ?? 'GET',
      headers: { authorization: req.headers.authorization ?? '', accept: req.headers.accept ?? '*/*' },
    });
    const body = Buffer.from(await answer.arrayBuffer());
    const cut = proxy.cuts.find((c) => !c.done && path.split('?')[0]!.endsWith(c.suffix));
    if (!cut || !answer.ok) {
      res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'text/plain' });
      res.end(body);
      return;
    }
    cut.done = true;
    const half = body.subarray(0, Math.floor(body.length / 2));
    if (cut.how === 'clean') {
      // A complete HTTP answer whose body is the first half: valid framing, invalid JSON.
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(half.length) });
      res.end(half);
      return;
    }
    // The full length announced, half sent, then the connection dropped.
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(body.length) });
    res.write(half, () => res.socket?.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    ...proxy,
    url: `http://127.0.0.1:${port}${new URL(upstream).pathname.replace(/\/+$/, '')}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

describe('an upstream answer cut short (rostercal sync through a cutting proxy)', () => {
  let sandbox: Sandbox;
  let proxy: CuttingProxy;
  let root: string;
  beforeAll(async () => {
    sandbox = await startWeekSandbox({ seed: 27, scale: 'small' });
    proxy = await startCuttingProxy(sandbox.url);
    root = mkdtempSync(join(tmpdir(), 'rostercal-cut-short-'));
  });
  afterAll(async () => {
    await proxy?.close();
    await sandbox?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  for (const how of ['clean', 'drop'] as const) {
    it(`a sessions page ${how === 'clean' ? 'ended cleanly half-way (200, invalid JSON)' : 'dropped half-way'} is read again: the pull succeeds`, async () => {
      proxy.cuts.push({ suffix: '/sessions', how });
      const before = proxy.seen.filter((p) => p.endsWith('/sessions')).length;
      const child = rostercal(['sync', '--full', '--no-push'], {
        ...schoolEnv({ url: proxy.url, token: sandbox.token }, { DATA_DIR: join(root, how) }),
      });
      const code = await child.exit;
      const out = child.output();
      expect(
        proxy.cuts.every((c) => c.done),
        out,
      ).toBe(true);
      expect(out).not.toMatch(/not JSON|problem: sessions/);
      expect(out).toMatch(/full pull succeeded/);
      expect(code, out).toBe(0);
      expect(out).toMatch(/upstream: \d+ requests, 1 retries/);
      // The cut page was asked for twice: once cut, once whole.
      const sessionsReads = proxy.seen.filter((p) => p.endsWith('/sessions')).length - before;
      const pages = Number(/sessions\s+(\d+) pages?/.exec(out)?.[1] ?? Number.NaN);
      expect(sessionsReads, out).toBe(pages + 1);
    }, 120_000);
  }
});
