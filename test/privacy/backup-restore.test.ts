// `rostercal backup` while `serve` answers feeds, then rotations made AFTER it (a team's feed, a child's link, and
// so a family link the child was in), then `rostercal restore` of that OLD backup into an empty DATA_DIR served on
// another port (issue 44): every URL rotated after the backup (or before it) stays dead, its replacement answers,
// every other feed URL `feeds list` printed and a family link made before the backup answer with the same bytes.
// Restoring the old backup with only its own record is refused unless the operator says no newer record exists,
// and a backup copied by hand serves nothing (503) rather than bring a rotated URL back. Real CLI children.
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bytes, cli, familyLink, feedsList } from './backup-helpers.ts';
import { type PrivacySchool, privacySchool, serve, tokenOf } from './served.ts';

let school: PrivacySchool;
const dirs: string[] = [];

beforeAll(async () => {
  school = await privacySchool(44);
}, 180_000);
afterAll(async () => {
  await school?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const tmp = (prefix: string) => {
  const d = mkdtempSync(path.join(tmpdir(), prefix));
  dirs.push(d);
  return d;
};

const calName = (b: Buffer) => /^X-WR-CALNAME:(.*)$/m.exec(b.toString('utf8'))?.[1]?.trim();

describe('backup while serving, rotations after it, restore of the old backup elsewhere', () => {
  it('rotated URLs stay dead, replacements and every other feed and family URL answer as before', async () => {
    const students = school.feeds.filter((f) => f.scope === 'student');
    const [early, kept1, kept2, late] = [students[0]!, students[1]!, students[2]!, students[3]!];
    const team = school.feeds.find((f) => f.scope === 'team')!;
    // A rotation before the backup, too: the backup's store knows it.
    await cli(['feeds', 'rotate', 'student', String(early.id)], school.env);
    const atBackup = await feedsList(school.env);
    const out = path.join(tmp('rostercal-backup-'), 'backup');
    const first = await serve(school);
    const before = new Map<string, Buffer>();
    let untouched: string;
    let withLate: string;
    let after: PrivacySchool['feeds'];
    try {
      untouched = await familyLink(first.url, kept1.url, kept2.page);
      withLate = await familyLink(first.url, kept1.url, late.page);
      for (const u of [...atBackup.map((f) => f.url), untouched, withLate]) {
        const r = await bytes(first.url, u);
        expect(r.status, u).toBe(200);
        before.set(u, r.body);
      }
      // Taken while serve runs and answers.
      const [backup] = await Promise.all([
        cli(['backup', '--out', out], school.env),
        ...atBackup.slice(0, 20).map((f) => bytes(first.url, f.url)),
      ]);
      expect(backup).toMatch(
        /backup written to .* in [\d.]+ s: rostercal\.sqlite, feed-rotations\.at-backup\.jsonl, feed-secret \([\d.]+ MB\)/,
      );
      expect(backup).not.toMatch(/\/feeds\/[A-Za-z0-9_-]{32}/);
      // After the backup: a team's feed and a child's link (so the family link with that child drops them).
      await cli(['feeds', 'rotate', 'team', String(team.id)], school.env);
      await cli(['feeds', 'rotate', 'student', String(late.id)], school.env);
      after = await feedsList(school.env);
      for (const f of after) before.set(f.url, (await bytes(first.url, f.url)).body);
      before.set(withLate, (await bytes(first.url, withLate)).body);
    } finally {
      await first.stop();
    }
    const rotatedAfter = atBackup.filter((f) => !after.some((a) => a.url === f.url));
    expect(rotatedAfter.map((f) => `${f.scope} ${f.id}`).sort()).toEqual(
      [`student ${late.id}`, `team ${team.id}`].sort(),
    );
    const current = path.join(school.dataDir, 'feed-rotations.jsonl');

    // The old backup with only its own record: refused, naming what to give.
    const lone = tmp('rostercal-restored-');
    const refused = await cli(['restore', '--from', out], { ...school.env, DATA_DIR: lone }, 2);
    expect(refused).toMatch(/--record .*--without-newer-record/s);

    const restored = tmp('rostercal-restored-');
    const env = { ...school.env, DATA_DIR: restored };
    expect(await cli(['restore', '--from', out, '--record', current], env)).toMatch(
      /restored .*2 rotation\(s\) made after the backup/s,
    );
    const second = await serve({ ...school, env, dataDir: restored });
    try {
      for (const f of after) {
        const r = await bytes(second.url, f.url);
        expect(r.status, `${f.scope} ${f.id}`).toBe(200);
        expect(r.body.equals(before.get(f.url)!), `${f.scope} ${f.id}: the same bytes`).toBe(true);
      }
      for (const f of [...rotatedAfter, early])
        expect((await fetch(`${second.url}/feeds/${tokenOf(f.url)}.ics`)).status, `${f.scope} ${f.id}`).toBe(
          404,
        );
      const fam = await bytes(second.url, untouched);
      expect(fam.status).toBe(200);
      expect(fam.body.equals(before.get(untouched)!), 'a family link made before the backup').toBe(true);
      expect((await fetch(`${second.url}${untouched}`)).status).toBe(200);
      const dropped = await bytes(second.url, withLate);
      expect(dropped.status).toBe(200);
      expect(calName(dropped.body)).toBe(calName(before.get(withLate)!));
    } finally {
      await second.stop();
    }

    // Copied by hand (store, its own old record, secret): nothing vouches, so nothing is served, never a rotated URL.
    const byHand = tmp('rostercal-byhand-');
    cpSync(out, byHand, { recursive: true });
    const third = await serve({ ...school, env: { ...school.env, DATA_DIR: byHand }, dataDir: byHand });
    try {
      for (const f of rotatedAfter)
        expect((await fetch(`${third.url}/feeds/${tokenOf(f.url)}.ics`)).status).toBe(503);
    } finally {
      await third.stop();
    }
  }, 300_000);
});
