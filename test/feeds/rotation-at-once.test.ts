// A rotation takes effect at once, with the settings `rostercal serve` uses by default (its token cache
// included): `rostercal feeds rotate` beside a running `serve`, and the admin page's POST /admin/feeds/rotate.
// Everything as an operator and a family meet it: `serve` and `feeds` as child processes, HTTP from outside.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FeedListing } from '../../src/cli/feeds.ts';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { rotateAsAdmin } from '../support/admin-rotation.ts';
import { type Child, rostercal, runRostercal, schoolEnv } from '../support/cli.ts';
import { startWeekSandbox } from '../support/clock.ts';
import { freePort } from '../support/ports.ts';

const ADMIN_TOKEN = 'rotation-at-once-admin-token-0123456789abcdef';
let sandbox: Sandbox;
let dir: string;
let env: Record<string, string>;
let serve: Child;
let base: string;

const cli = (args: string[]) => runRostercal(args, env);

/** The status of a feed URL (as `feeds list` prints it) asked of the running server. */
async function status(url: string): Promise<number> {
  const res = await fetch(`${base}${new URL(url).pathname}`);
  await res.arrayBuffer();
  return res.status;
}

beforeAll(async () => {
  // serve and the CLI run on the real clock: a school of this week's shape stays inside their windows.
  sandbox = await startWeekSandbox({ seed: 12, scale: 'small' });
  dir = mkdtempSync(path.join(tmpdir(), 'rostercal-at-once-'));
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  env = {
    ...schoolEnv(sandbox, { DATA_DIR: dir }),
    PUBLIC_URL: base,
    PORT: String(port),
    ADMIN_TOKEN,
    LOG_LEVEL: 'warn',
  };
  // `serve` as users run it: no setting of the test's own.
  serve = rostercal(['serve'], env);
  await serve.waitFor(/Stop with Ctrl-C/, 90_000);
}, 120_000);

afterAll(async () => {
  serve?.proc.kill('SIGTERM');
  await serve?.exit;
  await sandbox?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('a rotation takes effect at once with serve’s default settings', () => {
  let teams: FeedListing[];

  it('`rostercal feeds rotate`: the old URL answers 404 on the next request, the new one 200', async () => {
    const list = await cli(['feeds', 'list', '--json']);
    expect(list.code, list.stderr).toBe(0);
    teams = (JSON.parse(list.stdout) as FeedListing[]).filter((r) => r.scope === 'team');
    const old = teams[0]!;
    // A calendar app polls it: the server now remembers the token.
    expect(await status(old.url!)).toBe(200);
    expect(await status(old.url!)).toBe(200);

    const rotated = await cli(['feeds', 'rotate', 'team', String(old.id), '--json']);
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(await status(old.url!)).toBe(404);
    expect(await status((JSON.parse(rotated.stdout) as { url: string }).url)).toBe(200);
  });

  it('POST /admin/feeds/rotate: the old URL answers 404 on the next request, the new one 200', async () => {
    const old = teams[1]!;
    expect(await status(old.url!)).toBe(200);
    const {
      res,
      page,
      token: fresh,
    } = await rotateAsAdmin(base, ADMIN_TOKEN, {
      school: 'hillcrest',
      scope: 'team',
      id: old.id,
    });
    expect(res.status, page).toBe(200);
    expect(page).toContain('has stopped working');
    expect(await status(old.url!)).toBe(404);
    expect(fresh).not.toBeNull();
    expect(await status(`${base}/feeds/${fresh}.ics`)).toBe(200);
    // The CLI lists the new URL as current, not the old one.
    const again = JSON.parse((await cli(['feeds', 'list', '--json'])).stdout) as FeedListing[];
    expect(again.find((r) => r.scope === 'team' && r.id === old.id)!.url).toBe(`${base}/feeds/${fresh}.ics`);
  });

  it('GET /admin/feeds/rotated for a feed never rotated: 404, no message to families, and its link still works', async () => {
    // Seen from outside: the page said "The old link has stopped working (version 1 now)" and offered a message
    // telling families to subscribe again, while the old .ics still answered 200.
    const never = teams[2]!;
    const asAdmin = { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } };
    const q = (id: number) => new URLSearchParams({ school: 'hillcrest', scope: 'team', id: String(id) });
    const res = await fetch(`${base}/admin/feeds/rotated?${q(never.id)}`, asAdmin);
    const page = await res.text();
    expect(res.status, page).toBe(404);
    expect(page).toContain('never been replaced');
    expect(page).not.toContain('has stopped working');
    expect(page).not.toContain('subscribe again');
    expect(await status(never.url!)).toBe(200);
    // The one rotated above still gets its page.
    const rotated = await fetch(`${base}/admin/feeds/rotated?${q(teams[1]!.id)}`, asAdmin);
    expect(rotated.status).toBe(200);
    expect(await rotated.text()).toContain('has stopped working');
  });
});
