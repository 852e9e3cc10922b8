// The PostgreSQL side of backup and restore (issue 44), against a real server (TEST_DATABASE_URL, or the run's
// own): `rostercal backup` (pg_dump) while `serve` answers, a team's feed and a child's link rotated after it,
// `rostercal restore` (pg_restore) of that old backup into a fresh database and an empty DATA_DIR with the running
// record: every feed URL `feeds list` prints and a family link made before the backup answer with the same bytes,
// the rotated URLs stay dead. pg_dump and pg_restore missing or of another major version fail naming them.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { schoolEnv } from '../support/cli.ts';
import { startWeekSandbox } from '../support/clock.ts';
import { createTestDatabase, type TestDatabase } from '../support/pg.ts';
import { bytes, cli, familyLink, feedsList } from './backup-helpers.ts';
import { ADMIN_TOKEN, type PrivacySchool, serve, tokenOf } from './served.ts';

let sandbox: Sandbox;
const dbs: TestDatabase[] = [];
const dirs: string[] = [];

const tmp = (prefix: string) => {
  const d = mkdtempSync(path.join(tmpdir(), prefix));
  dirs.push(d);
  return d;
};

beforeAll(async () => {
  sandbox = await startWeekSandbox({ scale: 'small', seed: 4444 });
}, 120_000);
afterAll(async () => {
  await sandbox?.close();
  for (const db of dbs) await db.drop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function storeOn(): Promise<{ env: Record<string, string>; dataDir: string }> {
  const db = await createTestDatabase();
  dbs.push(db);
  const dataDir = tmp('rostercal-pg-data-');
  return {
    env: { ...schoolEnv(sandbox, { DATABASE_URL: db.url, DATA_DIR: dataDir }), ADMIN_TOKEN },
    dataDir,
  };
}

describe('PostgreSQL: pg_dump while serving, pg_restore of the old backup into a fresh database', () => {
  it('every feed and family URL answers with the same bytes; URLs rotated after the backup stay dead', async () => {
    const live = await storeOn();
    await cli(['sync', '--full'], live.env);
    const atBackup = await feedsList(live.env);
    const school = { sandbox, env: live.env, dataDir: live.dataDir, feeds: atBackup, close: async () => {} };
    const students = atBackup.filter((f) => f.scope === 'student');
    const team = atBackup.find((f) => f.scope === 'team')!;
    const out = path.join(tmp('rostercal-pg-backup-'), 'backup');
    const before = new Map<string, Buffer>();
    let family: string;
    let after: PrivacySchool['feeds'];
    const first = await serve(school);
    try {
      family = await familyLink(first.url, students[0]!.url, students[1]!.page);
      for (const u of [...atBackup.map((f) => f.url), family]) {
        const r = await bytes(first.url, u);
        expect(r.status, u).toBe(200);
        before.set(u, r.body);
      }
      const [backup] = await Promise.all([
        cli(['backup', '--out', out], live.env),
        ...atBackup.slice(0, 20).map((f) => bytes(first.url, f.url)),
      ]);
      expect(backup).toMatch(
        /backup written to .* in [\d.]+ s: rostercal\.pgdump, feed-rotations\.at-backup\.jsonl, feed-secret \([\d.]+ MB\)/,
      );
      expect(backup).not.toContain(live.env.DATABASE_URL);
      await cli(['feeds', 'rotate', 'team', String(team.id)], live.env);
      await cli(['feeds', 'rotate', 'student', String(students[2]!.id)], live.env);
      after = await feedsList(live.env);
      for (const f of after) before.set(f.url, (await bytes(first.url, f.url)).body);
    } finally {
      await first.stop();
    }
    const rotated = atBackup.filter((f) => !after.some((a) => a.url === f.url));
    expect(rotated).toHaveLength(2);

    const fresh = await storeOn();
    const restore = await cli(
      ['restore', '--from', out, '--record', path.join(live.dataDir, 'feed-rotations.jsonl')],
      fresh.env,
    );
    expect(restore).toMatch(/restored .*2 rotation\(s\) made after the backup/s);
    expect(restore).not.toContain(fresh.env.DATABASE_URL);
    // Into a database that is not empty: refused, nothing touched.
    const again = tmp('rostercal-pg-data-');
    expect(
      await cli(['restore', '--from', out, '--without-newer-record'], { ...fresh.env, DATA_DIR: again }, 2),
    ).toMatch(/not empty/);
    const second = await serve({ ...school, env: fresh.env, dataDir: fresh.dataDir });
    try {
      for (const f of after) {
        const r = await bytes(second.url, f.url);
        expect(r.status, `${f.scope} ${f.id}`).toBe(200);
        expect(r.body.equals(before.get(f.url)!), `${f.scope} ${f.id}: the same bytes`).toBe(true);
      }
      for (const f of rotated)
        expect((await fetch(`${second.url}/feeds/${tokenOf(f.url)}.ics`)).status, `${f.scope} ${f.id}`).toBe(
          404,
        );
      const fam = await bytes(second.url, family);
      expect(fam.status).toBe(200);
      expect(fam.body.equals(before.get(family)!), 'a family link made before the backup').toBe(true);
    } finally {
      await second.stop();
    }
  }, 300_000);
});
