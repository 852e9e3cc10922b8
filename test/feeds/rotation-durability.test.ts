// A rotated feed URL never answers again, whatever happens to the database; a lost feed secret stops start-up.
// Driven as an operator and a family meet it: `rostercal sync`, `rostercal feeds …` and `rostercal serve` as
// child processes, the running service over HTTP.
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FeedListing } from '../../src/cli/feeds.ts';
import { loadConfig } from '../../src/config.ts';
import { type RunningService, startService } from '../../src/running-service.ts';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { startWeekSandbox } from '../support/clock.ts';

const run = promisify(execFile);
const PUBLIC = 'https://cal.example.org';
let sandbox: Sandbox;
let dir: string;
let env: Record<string, string>;

async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await run(process.execPath, ['bin/rostercal.js', ...args], { env, encoding: 'utf8' });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

async function serve(): Promise<{ service: RunningService; said: string[] }> {
  const said: string[] = [];
  const config = await loadConfig(env);
  const service = await startService({ config, port: 0, host: '127.0.0.1', say: (l) => said.push(l) });
  await service.initialPulls;
  return { service, said };
}

async function status(service: RunningService, url: string): Promise<number> {
  const res = await fetch(url.replace(PUBLIC, service.url));
  await res.arrayBuffer();
  return res.status;
}

function dbFiles(): string[] {
  return readdirSync(dir).filter((f) => f.startsWith('rostercal.sqlite'));
}

function loseDatabase(): void {
  for (const f of dbFiles()) rmSync(path.join(dir, f));
}

beforeAll(async () => {
  sandbox = await startWeekSandbox({ seed: 5, scale: 'small' });
  dir = mkdtempSync(path.join(tmpdir(), 'rostercal-rotation-'));
  env = {
    PATH: process.env.PATH ?? '',
    DATA_DIR: dir,
    PUBLIC_URL: PUBLIC,
    UPSTREAM_URL: sandbox.url,
    UPSTREAM_TOKEN: sandbox.token,
    SCHOOL_ID: 'hill',
    SCHOOL_NAME: 'Hillcrest College',
    SCHOOL_TZ: sandbox.school.timeZone,
    LOG_LEVEL: 'silent',
  };
  const sync = await cli(['sync']);
  expect(sync.code, sync.stderr).toBe(0);
});
afterAll(async () => {
  await sandbox?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('a rotated feed URL never comes back', () => {
  let rows: FeedListing[];
  let rotatedOld: string;
  let rotatedNew: string;
  let neverRotated: FeedListing[];
  let teamId: number;

  it('after the database is lost and the school pulled again (the secret and rotation record kept)', async () => {
    rows = JSON.parse((await cli(['feeds', 'list', '--json'])).stdout) as FeedListing[];
    const teams = rows.filter((r) => r.scope === 'team');
    teamId = teams[0]!.id;
    rotatedOld = teams[0]!.url!;
    neverRotated = [
      teams[1]!,
      rows.find((r) => r.scope === 'student')!,
      rows.find((r) => r.scope === 'staff')!,
    ];
    const rotated = await cli(['feeds', 'rotate', 'team', String(teamId), '--json']);
    expect(rotated.code, rotated.stderr).toBe(0);
    rotatedNew = (JSON.parse(rotated.stdout) as { url: string }).url;

    loseDatabase();
    const { service, said } = await serve();
    try {
      expect(await status(service, rotatedOld)).toBe(404);
      expect(await status(service, rotatedNew)).toBe(200);
      expect(said.join('\n')).toMatch(/did not know 1 feed rotation/);
      for (const r of neverRotated) expect(await status(service, r.url!), `${r.scope} ${r.id}`).toBe(200);
      expect((await fetch(`${service.url}/readyz`)).status).toBe(200);
    } finally {
      await service.close();
    }
    // The CLI agrees: it lists the rotated URL, not the old one.
    const again = JSON.parse((await cli(['feeds', 'list', '--json'])).stdout) as FeedListing[];
    expect(again.find((r) => r.scope === 'team' && r.id === teamId)!.url).toBe(rotatedNew);
  });

  it('after the database is restored from a backup older than the last rotation', async () => {
    const backup = mkdtempSync(path.join(tmpdir(), 'rostercal-backup-'));
    for (const f of dbFiles()) copyFileSync(path.join(dir, f), path.join(backup, f));
    const rotated = await cli(['feeds', 'rotate', 'team', String(teamId), '--json']);
    expect(rotated.code, rotated.stderr).toBe(0);
    const newest = (JSON.parse(rotated.stdout) as { url: string }).url;
    loseDatabase();
    for (const f of readdirSync(backup)) copyFileSync(path.join(backup, f), path.join(dir, f));
    rmSync(backup, { recursive: true, force: true });

    const { service } = await serve();
    try {
      expect(await status(service, rotatedOld)).toBe(404);
      expect(await status(service, rotatedNew)).toBe(404);
      expect(await status(service, newest)).toBe(200);
      for (const r of neverRotated) expect(await status(service, r.url!)).toBe(200);
    } finally {
      await service.close();
    }
    rotatedNew = newest;
  });

  it('when the rotation record file is lost: the database’s copy vouches, and the file is written again', async () => {
    const file = path.join(dir, 'feed-rotations.jsonl');
    rmSync(file);
    const { service, said } = await serve();
    try {
      expect(said.join('\n')).not.toMatch(/no feed rotation record/);
      expect((await fetch(`${service.url}/readyz`)).status).toBe(200);
      expect(await status(service, rotatedNew)).toBe(200);
      expect(await status(service, neverRotated[0]!.url!)).toBe(200);
      expect(await status(service, rotatedOld)).toBe(404);
    } finally {
      await service.close();
    }
    expect(existsSync(file)).toBe(true);
    // The file written again is what brings the rotations back into a database lost afterwards.
    loseDatabase();
    const again = await serve();
    try {
      expect(again.said.join('\n')).toMatch(/did not know 1 feed rotation/);
      expect(await status(again.service, rotatedOld)).toBe(404);
      expect(await status(again.service, rotatedNew)).toBe(200);
      expect(await status(again.service, neverRotated[0]!.url!)).toBe(200);
    } finally {
      await again.service.close();
    }
  });
});

describe('a lost feed secret', () => {
  it('stops start-up with one message naming FEED_SECRET and the file, and makes no new secret', async () => {
    const secretFile = path.join(dir, 'feed-secret');
    const saved = path.join(dir, 'feed-secret.bak');
    copyFileSync(secretFile, saved);
    rmSync(secretFile);
    try {
      const served = await cli(['serve', '--port', '0']);
      // A start-up step that fails: exit 1 (README, "What fails and what to do"), not a crash.
      expect(served.code, served.stderr).toBe(1);
      const lines = served.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain('FEED_SECRET');
      expect(lines[0]).toContain(secretFile);
      expect(existsSync(secretFile)).toBe(false);

      // Another secret (FEED_SECRET set to something else) is refused the same way.
      env.FEED_SECRET = 'a-different-secret-0123456789abcdefghij';
      const other = await cli(['feeds', 'list']);
      delete env.FEED_SECRET;
      expect(other.code, other.stderr).toBe(1);
      expect(other.stderr).toMatch(/FEED_SECRET.*did not make/);
      expect(other.stderr).toContain(secretFile);
    } finally {
      copyFileSync(saved, secretFile);
      rmSync(saved);
    }
    const list = await cli(['feeds', 'list', '--json']);
    expect(list.code, list.stderr).toBe(0);
  });
});
