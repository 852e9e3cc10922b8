// A pull stopped part-way records what it wrote. The real `rostercal sync` (or `serve`'s start-up pull) pulls
// through a proxy in front of the sandbox that holds every sessions request unanswered, so the pull writes each
// resource before sessions and then waits; once the process has reported the last of them written, it is killed
// with SIGKILL (sync) or stopped with SIGTERM (serve). The run history (`rostercal status --json`) then shows the
// run interrupted with each written resource's counts, the same the process reported as it committed them, not
// `+0 ~0 -0`.

import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.ts';
import type { RunCounts } from '../../src/store/types.ts';
import { rostercal, schoolEnv } from '../support/cli.ts';
import { startWeekSandbox } from '../support/clock.ts';
import { freePort } from '../support/ports.ts';

/** Forwards to the sandbox, except requests for `/sessions`, which it holds until it is closed. */
async function startHoldingProxy(upstream: string) {
  const held: ServerResponse[] = [];
  let heldOne: () => void = () => {};
  const firstHeld = new Promise<void>((resolve) => {
    heldOne = resolve;
  });
  const server: Server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const path = req.url ?? '/';
    if (path.split('?')[0]!.endsWith('/sessions')) {
      held.push(res);
      heldOne();
      return;
    }
    const answer = await fetch(upstream + path, {
      headers: { authorization: req.headers.authorization ?? '', accept: req.headers.accept ?? '*/*' },
    });
    res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'text/plain' });
    res.end(Buffer.from(await answer.arrayBuffer()));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${new URL(upstream).pathname.replace(/\/+$/, '')}`,
    firstHeld,
    close: () =>
      new Promise<void>((r) => {
        for (const res of held) res.socket?.destroy();
        server.close(() => r());
      }),
  };
}

describe('a pull stopped part-way keeps the counts of what it wrote', () => {
  let sandbox: Sandbox;
  let proxy: Awaited<ReturnType<typeof startHoldingProxy>>;
  let root: string;
  beforeAll(async () => {
    sandbox = await startWeekSandbox({ seed: 31, scale: 'small' });
    proxy = await startHoldingProxy(sandbox.url);
    root = mkdtempSync(join(tmpdir(), 'rostercal-interrupted-counts-'));
  });
  afterAll(async () => {
    await proxy?.close();
    await sandbox?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('sync killed with SIGKILL: the run history keeps the counts of every resource written before', async () => {
    const env = schoolEnv({ url: proxy.url, token: sandbox.token }, { DATA_DIR: join(root, 'data') });
    const child = rostercal(['sync', '--full', '--no-push'], env);
    onTestFinished(() => void child.proc.kill('SIGKILL'));
    // Teams are the last resource before sessions (absences come between them, on their own download).
    await child.waitFor(/absences\s+\d+ pages?, \+\d+/, 120_000);
    await proxy.firstHeld;
    child.proc.kill('SIGKILL');
    await child.ended;

    // What the CLI said it committed, resource by resource: `hillcrest:   students       2 pages, +60 ~0 -0 =0`.
    const printed = new Map<string, number>();
    for (const m of child.output().matchAll(/^\S+:\s{3}(\S+(?: \S+)?)\s+\d+ pages?, \+(\d+) ~\d+ -\d+/gm))
      printed.set(m[1]!.replace(' ', ''), Number(m[2]));
    expect(printed.get('students'), child.output()).toBeGreaterThan(0);
    expect(printed.get('staff'), child.output()).toBeGreaterThan(0);

    const status = rostercal(['status', '--json'], env);
    expect(await status.exit, status.output()).toBe(0);
    const report = JSON.parse(status.stdout()) as {
      runs: { kind: string; status: string; counts: Record<string, RunCounts> }[];
    };
    const run = report.runs.find((r) => r.kind === 'full');
    expect(run?.status, status.stdout()).toBe('interrupted');
    const recorded = Object.fromEntries(
      Object.entries(run!.counts).map(([k, c]) => [k.toLowerCase(), c.added]),
    );
    for (const [kind, added] of printed)
      expect(recorded[kind.toLowerCase()], `${kind}: ${status.stdout()}`).toBe(added);
    expect(recorded.sessions).toBeUndefined();

    // The human table says the same.
    const table = rostercal(['status'], env);
    expect(await table.exit).toBe(0);
    const total = [...printed.values()].reduce((a, b) => a + b, 0);
    expect(table.output()).toMatch(new RegExp(`full\\s+interrupted.*\\+${total} ~0 -0`));
  }, 180_000);

  it('serve stopped with SIGTERM during its start-up pull: the interrupted run keeps the counts', async () => {
    const env = {
      ...schoolEnv({ url: proxy.url, token: sandbox.token }, { DATA_DIR: join(root, 'serve') }),
      PORT: String(await freePort()),
      LOG_LEVEL: 'debug',
    };
    const child = rostercal(['serve'], env);
    onTestFinished(() => void child.proc.kill('SIGKILL'));
    await child.waitFor(/"resource":"absences".*"msg":"resource done"/, 120_000);
    await proxy.firstHeld;
    child.proc.kill('SIGTERM');
    await child.ended;

    const logged = new Map<string, number>();
    for (const line of child
      .output()
      .split('\n')
      .filter((l) => l.includes('"msg":"resource done"'))) {
      const r = JSON.parse(line) as { resource: string; added: number };
      logged.set(r.resource, r.added);
    }
    expect(logged.get('students'), child.output()).toBeGreaterThan(0);

    const status = rostercal(['status', '--json'], env);
    expect(await status.exit, status.output()).toBe(0);
    const report = JSON.parse(status.stdout()) as {
      runs: { kind: string; status: string; errors: string[]; counts: Record<string, RunCounts> }[];
    };
    const run = report.runs.find((r) => r.kind === 'full');
    expect(run?.status, status.stdout()).toBe('interrupted');
    expect(run?.errors.join('\n')).toMatch(/interrupted: .*stopping/);
    for (const [kind, added] of logged)
      expect(run!.counts[kind]?.added, `${kind}: ${status.stdout()}`).toBe(added);
    expect(run!.counts.sessions).toBeUndefined();
  }, 180_000);
});
