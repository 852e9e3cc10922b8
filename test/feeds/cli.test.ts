// `rostercal feeds list` and `rostercal feeds rotate` as a person runs them, against a pulled store.
import { execFile } from 'node:child_process';
import { statSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FeedListing } from '../../src/cli/feeds.ts';
import { loadFeedSecret } from '../../src/feeds/tokens.ts';
import type { RunningServer } from '../../src/web/server.ts';
import { type Harness, SECRET, startHarness } from './harness.ts';

const run = promisify(execFile);
let h: Harness;
let server: RunningServer;
const PUBLIC = 'https://cal.example.org';

function cli(args: string[], extraEnv: Record<string, string> = {}) {
  return run(process.execPath, ['bin/rostercal.js', 'feeds', ...args], {
    env: {
      PATH: process.env.PATH ?? '',
      DATA_DIR: h.dir,
      PUBLIC_URL: PUBLIC,
      FEED_SECRET: SECRET.toString('utf8'),
      ...extraEnv,
    },
    encoding: 'utf8',
  });
}

const local = (url: string) => url.replace(PUBLIC, server.url);

beforeAll(async () => {
  h = await startHarness();
  server = await h.serve({ publicUrl: PUBLIC });
  // A FEED_SECRET of the operator's own vouches for nothing until they say the database is current.
  await cli(['accept-store']);
});
afterAll(async () => {
  await h?.close();
});

describe('rostercal feeds', () => {
  it('list --json prints every feed with a working URL; rotate kills the old URL', async () => {
    const { stdout } = await cli(['list', '--json']);
    const rows = JSON.parse(stdout) as FeedListing[];
    const s = h.sandbox.school;
    expect(rows.filter((r) => r.scope === 'team')).toHaveLength(s.teams.length);
    expect(rows.filter((r) => r.scope === 'student')).toHaveLength(
      s.students.filter((x) => x.current !== false).length,
    );
    expect(rows.filter((r) => r.scope === 'activity').length).toBeGreaterThan(0);
    expect(rows.filter((r) => r.scope === 'staff').length).toBeGreaterThan(0);
    for (const r of rows) expect(r.url).toMatch(/^https:\/\/cal\.example\.org\/feeds\/[\w-]{32}\.ics$/);
    // One of each scope answers with a calendar.
    for (const scope of ['team', 'student', 'staff', 'activity']) {
      const row = rows.find((r) => r.scope === scope)!;
      const res = await fetch(local(row.url!));
      expect(res.status, scope).toBe(200);
      expect(await res.text()).toContain('BEGIN:VCALENDAR');
    }
    // Listing again issues nothing new: same URLs.
    const again = JSON.parse((await cli(['list', '--json'])).stdout) as FeedListing[];
    expect(again.map((r) => r.url)).toEqual(rows.map((r) => r.url));

    const team = rows.find((r) => r.scope === 'team')!;
    const rotated = JSON.parse((await cli(['rotate', 'team', String(team.id), '--json'])).stdout) as {
      url: string;
    };
    expect(rotated.url).not.toBe(team.url);
    expect((await fetch(local(team.url!))).status).toBe(404);
    expect((await fetch(local(rotated.url))).status).toBe(200);
    const after = JSON.parse((await cli(['list', '--json'])).stdout) as FeedListing[];
    expect(after.find((r) => r.scope === 'team' && r.id === team.id)!.url).toBe(rotated.url);
    expect(after.filter((r) => r.url !== rotated.url).map((r) => r.url)).toEqual(
      rows.filter((r) => r.url !== team.url).map((r) => r.url),
    );
  });

  it('prints a table, and clear errors for bad arguments', async () => {
    const { stdout } = await cli(['list']);
    expect(stdout.split('\n')[0]).toMatch(
      /^SCHOOL\s+SCOPE\s+ID\s+NAME\s+PAGE TO SEND \(calendar: add \.ics\)/,
    );
    expect(stdout).toContain(h.sandbox.school.teams[0]!.name);
    // The page families open (subscribe buttons, QR code), not the bare calendar.
    const links = stdout.match(/https:\/\/\S+/g) ?? [];
    expect(links.length).toBeGreaterThan(0);
    for (const link of links) expect(link).toMatch(/^https:\/\/cal\.example\.org\/feeds\/[\w-]{32}$/);
    await expect(cli(['rotate', 'planet', '1'])).rejects.toMatchObject({ code: 2 });
    await expect(cli(['rotate', 'team', '999999'])).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining('no team feed with id 999999'),
    });
    await expect(cli(['list', '--school', 'nope'])).rejects.toMatchObject({
      stderr: expect.stringContaining('--school nope'),
    });
  });

  it('list --json gives both the page to send and the calendar itself', async () => {
    const rows = JSON.parse((await cli(['list', '--json'])).stdout) as FeedListing[];
    for (const r of rows) expect(r.url).toBe(`${r.page}.ics`);
  });

  it('warns that the URLs follow this command’s PORT when PUBLIC_URL is unset (serve on another port)', async () => {
    const { stdout, stderr } = await cli(['list'], { PUBLIC_URL: '', PORT: '9123' });
    expect(stdout).toContain('http://localhost:9123/feeds/');
    expect(stderr).toMatch(
      /warning: PUBLIC_URL is not set: these URLs use http:\/\/localhost:9123, which work only on this machine and only while `rostercal serve` listens on port 9123/,
    );
    const quiet = await cli(['list']);
    expect(quiet.stderr).not.toMatch(/PUBLIC_URL/);
  });

  it('rotate names the page to send families first, then the calendar', async () => {
    const team = h.sandbox.school.teams[1]!;
    const { stdout } = await cli(['rotate', 'team', String(team.id)]);
    expect(stdout).toMatch(/the previous URL no longer works: everyone subscribed must subscribe again/);
    expect(stdout).toMatch(/^page to send them: https:\/\/cal\.example\.org\/feeds\/[\w-]{32}$/m);
    expect(stdout).toMatch(/^calendar \(\.ics\): +https:\/\/cal\.example\.org\/feeds\/[\w-]{32}\.ics$/m);
  });

  it('without FEED_SECRET, a 0600 secret file in DATA_DIR is created and reused', async () => {
    const env = { dataDir: h.dir };
    const a = loadFeedSecret(env);
    const b = loadFeedSecret(env);
    expect(a.equals(b)).toBe(true);
    expect(a.length).toBeGreaterThanOrEqual(32);
    expect(statSync(path.join(h.dir, 'feed-secret')).mode & 0o777).toBe(0o600);
    expect(() => loadFeedSecret({ secret: 'short' })).toThrow(/FEED_SECRET/);
  });
});
