// A rotation is all or nothing (issue 41): on a full disk, `rostercal feeds rotate` exited 1 with "database or disk
// is full" and the old URL kept working, but the rotation had reached feed-rotations.jsonl; the next `serve` start
// applied it: the old URL went 404 and a new URL nobody was ever given was served. Now what the command (or the
// admin page) says and what the URLs do agree, before and after a restart: a rotation that says it failed leaves
// the old URL working, one that says it succeeded has killed it.
// DATA_DIR (the SQLite store, the secret, the rotation record) is a real tmpfs mounted by the test (as root, as in
// failures/full-disk-serving.test.ts), filled to the last byte with fallocate.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FeedListing } from '../../src/cli/feeds.ts';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { rotateAsAdmin } from '../support/admin-rotation.ts';
import { type Child, rostercal, runRostercal, schoolEnv, stopped } from '../support/cli.ts';
import { startWeekSandbox } from '../support/clock.ts';
import { freePort } from '../support/ports.ts';
import { mountTmpfs, type Tmpfs } from '../support/tmpfs.ts';

const ADMIN_TOKEN = 'rotation-full-disk-admin-token-0123456789ab';
let sandbox: Sandbox;
let disk: Tmpfs;
let env: Record<string, string>;
let base: string;
let serve: Child | null = null;

const cli = (args: string[]) => runRostercal(args, env);

async function status(url: string): Promise<number> {
  const res = await fetch(`${base}${new URL(url).pathname}`);
  await res.arrayBuffer();
  return res.status;
}

async function startServe(): Promise<void> {
  serve = rostercal(['serve'], env);
  await serve.waitFor(/Stop with Ctrl-C/, 120_000);
}

/** Fills DATA_DIR's filesystem to the last byte (serve writes meanwhile: what it took is filled again). */
function fill(): void {
  disk.fill();
  expect(disk.available()).toBe(0);
}

const unfill = () => disk.unfill();

/** The URL `feeds list` gives for a team now. */
async function listed(teamId: number): Promise<string> {
  const list = await cli(['feeds', 'list', '--json']);
  expect(list.code, list.stderr).toBe(0);
  return (JSON.parse(list.stdout) as FeedListing[]).find((r) => r.scope === 'team' && r.id === teamId)!.url!;
}

beforeAll(async () => {
  disk = await mountTmpfs('rotfull', 24);
  sandbox = await startWeekSandbox({ seed: 31, scale: 'small' });
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  env = { ...schoolEnv(sandbox, { DATA_DIR: disk.data }), PUBLIC_URL: base, PORT: String(port), ADMIN_TOKEN };
  const synced = await cli(['sync']);
  expect(synced.code, synced.stderr).toBe(0);
}, 120_000);

afterAll(async () => {
  if (serve) await stopped(serve);
  await sandbox?.close();
  await disk?.close();
});

describe('a rotation on a full disk: what it says and what the URLs do agree, before and after a restart', () => {
  let teams: FeedListing[];

  beforeAll(async () => {
    const list = await cli(['feeds', 'list', '--json']);
    expect(list.code, list.stderr).toBe(0);
    teams = (JSON.parse(list.stdout) as FeedListing[]).filter((r) => r.scope === 'team');
  });

  it('`rostercal feeds rotate`', async () => {
    const old = teams[0]!;
    await startServe();
    expect(await status(old.url!)).toBe(200);
    fill();
    let rotated: Awaited<ReturnType<typeof cli>>;
    let newUrl: string | null = null;
    try {
      rotated = await cli(['feeds', 'rotate', 'team', String(old.id), '--json']);
      if (rotated.code === 0) newUrl = (JSON.parse(rotated.stdout) as { url: string }).url;
      console.log(
        `feeds rotate on a full disk: exit ${rotated.code}; ${rotated.stderr.trim().slice(0, 300)}`,
      );
      // Before the restart.
      expect(await status(old.url!)).toBe(rotated.code === 0 ? 404 : 200);
      if (newUrl) expect(await status(newUrl)).toBe(200);
    } finally {
      await stopped(serve!);
      unfill();
    }
    // After the restart, with room on the disk again.
    await startServe();
    expect(await status(old.url!), 'the old URL after a restart').toBe(rotated.code === 0 ? 404 : 200);
    if (newUrl) expect(await status(newUrl)).toBe(200);
    expect(await listed(old.id)).toBe(newUrl ?? old.url);
    await stopped(serve!);
    serve = null;
  }, 300_000);

  it('POST /admin/feeds/rotate', async () => {
    const old = teams[1]!;
    await startServe();
    expect(await status(old.url!)).toBe(200);
    fill();
    let answer: number;
    let newUrl: string | null = null;
    try {
      const {
        res,
        page,
        token: fresh,
      } = await rotateAsAdmin(base, ADMIN_TOKEN, {
        school: 'hillcrest',
        scope: 'team',
        id: old.id,
      });
      answer = res.status;
      console.log(`admin rotation on a full disk: ${res.status} ${page.slice(0, 200)}`);
      if (res.status === 200) {
        expect(page).toContain('has stopped working');
        expect(fresh).not.toBeNull();
        newUrl = `${base}/feeds/${fresh}.ics`;
      } else {
        // A page a person reads, saying the link was not changed.
        expect(res.headers.get('content-type')).toMatch(/text\/html/);
        expect(page).toMatch(/not changed/i);
      }
      expect(await status(old.url!)).toBe(answer === 200 ? 404 : 200);
      if (newUrl) expect(await status(newUrl)).toBe(200);
    } finally {
      await stopped(serve!);
      unfill();
    }
    await startServe();
    expect(await status(old.url!), 'the old URL after a restart').toBe(answer === 200 ? 404 : 200);
    if (newUrl) expect(await status(newUrl)).toBe(200);
    expect(await listed(old.id)).toBe(newUrl ?? old.url);
  }, 300_000);
});
