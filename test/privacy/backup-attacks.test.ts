// A reviewer's attacks on `rostercal backup` / `restore` from outside (issue 44): real CLI children on a pulled
// sandbox school. A damaged or incomplete backup is refused clearly and leaves DATA_DIR as it found it, so the
// restore can be run again from a good backup; files holding children's data are 0600 in 0700 directories; no
// capability URL or secret reaches the terminal.
import {
  chmodSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli } from './backup-helpers.ts';
import { type PrivacySchool, privacySchool } from './served.ts';

let school: PrivacySchool;
let out: string;
const dirs: string[] = [];
const tmp = (prefix: string) => {
  const d = mkdtempSync(path.join(tmpdir(), prefix));
  dirs.push(d);
  return d;
};
const TOKENISH = /\/(feeds|family)\/[A-Za-z0-9_-]{20,}/;

beforeAll(async () => {
  school = await privacySchool(45);
  out = path.join(tmp('rostercal-bk-'), 'b');
  const said = await cli(['backup', '--out', out], school.env);
  expect(said).not.toMatch(TOKENISH);
  expect(said).not.toContain(readFileSync(path.join(school.dataDir, 'feed-secret'), 'utf8').trim());
}, 180_000);
afterAll(async () => {
  await school?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const record = () => path.join(school.dataDir, 'feed-rotations.jsonl');

describe('backup and restore attacked from outside', () => {
  it('backup files are 0600 in a 0700 directory, even when the directory existed open to others', async () => {
    expect(statSync(out).mode & 0o777).toBe(0o700);
    for (const f of readdirSync(out)) expect(statSync(path.join(out, f)).mode & 0o777, f).toBe(0o600);
    const open = path.join(tmp('rostercal-bk-open-'), 'b');
    mkdirSync(open, { mode: 0o755 });
    chmodSync(open, 0o755);
    await cli(['backup', '--out', open], school.env);
    expect(statSync(open).mode & 0o777).toBe(0o700);
    for (const f of readdirSync(open)) expect(statSync(path.join(open, f)).mode & 0o777, f).toBe(0o600);
  }, 120_000);

  it('backup into a non-empty directory is refused (2) and writes nothing there', async () => {
    const d = tmp('rostercal-bk-full-');
    writeFileSync(path.join(d, 'x'), 'x');
    await cli(['backup', '--out', d], school.env, 2);
    expect(readdirSync(d)).toEqual(['x']);
    // Observed before: exit 1, 'FEED_SECRET: … The database holds feed URLs made with another feed secret' (none).
    const empty = tmp('rostercal-nodata-');
    expect(
      await cli(['backup', '--out', path.join(empty, 'b')], { ...school.env, DATA_DIR: empty }, 2),
    ).toMatch(/no store to back up: .*rostercal\.sqlite does not exist/);
    // Observed before: exit 1, `rostercal backup: ENOTDIR: not a directory, scandir …`.
    expect(await cli(['backup', '--out', path.join(d, 'x')], school.env, 2)).toMatch(
      /x is a file: give a new or empty directory/,
    );
  }, 60_000);

  it('restore over a DATA_DIR with a store is refused (2), the store untouched', async () => {
    const before = statSync(path.join(school.dataDir, 'rostercal.sqlite')).mtimeMs;
    const said = await cli(['restore', '--from', out, '--record', record()], school.env, 2);
    expect(said).toMatch(/exists: stop serve and move it aside/);
    expect(statSync(path.join(school.dataDir, 'rostercal.sqlite')).mtimeMs).toBe(before);
  }, 60_000);

  for (const damage of ['truncated', 'corrupted'] as const)
    it(`a ${damage} backup store is refused (1) clearly; DATA_DIR is left empty so a good backup restores after`, async () => {
      const bad = path.join(tmp('rostercal-bad-'), 'b');
      cpSync(out, bad, { recursive: true });
      const file = path.join(bad, 'rostercal.sqlite');
      const size = statSync(file).size;
      if (damage === 'truncated') truncateSync(file, Math.floor(size / 2));
      else {
        const buf = readFileSync(file);
        for (let i = 4096; i < buf.length; i += 1024) buf[i] = 0xff;
        writeFileSync(file, buf);
      }
      const data = tmp('rostercal-into-');
      const env = { ...school.env, DATA_DIR: data };
      const said = await cli(['restore', '--from', bad, '--record', record()], env, 1);
      expect(said).toMatch(/malformed|damaged|corrupt|not a database/i);
      expect(said).not.toMatch(TOKENISH);
      expect(readdirSync(data).filter((f) => f.startsWith('rostercal.sqlite'))).toEqual([]);
      // The operator then restores the good backup into the same DATA_DIR.
      await cli(['restore', '--from', out, '--record', record()], env);
      expect(statSync(data).mode & 0o777).toBe(0o700);
      for (const f of readdirSync(data)) expect(statSync(path.join(data, f)).mode & 0o777, f).toBe(0o600);
    }, 120_000);

  it('a backup missing its secret or its rotation record is refused (2) naming the file, DATA_DIR untouched', async () => {
    const noSecret = path.join(tmp('rostercal-ns-'), 'b');
    cpSync(out, noSecret, { recursive: true });
    unlinkSync(path.join(noSecret, 'feed-secret'));
    const d1 = tmp('rostercal-into-');
    expect(
      await cli(['restore', '--from', noSecret, '--record', record()], { ...school.env, DATA_DIR: d1 }, 2),
    ).toMatch(/feed-secret/);
    expect(readdirSync(d1)).toEqual([]);
    const noRecord = path.join(tmp('rostercal-nr-'), 'b');
    cpSync(out, noRecord, { recursive: true });
    unlinkSync(path.join(noRecord, 'feed-rotations.at-backup.jsonl'));
    const d2 = tmp('rostercal-into-');
    // Observed before the fix: exit 1, `rostercal restore: ENOENT: … open '…/feed-rotations.jsonl'` (a name the
    // backup never had), after the feed secret was already copied into DATA_DIR.
    const said = await cli(
      ['restore', '--from', noRecord, '--record', record()],
      { ...school.env, DATA_DIR: d2 },
      2,
    );
    expect(said).toMatch(/holds no feed-rotations\.at-backup\.jsonl: this backup is incomplete/);
    expect(readdirSync(d2)).toEqual([]);
  }, 120_000);
});
