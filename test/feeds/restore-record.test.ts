// Which rotation record a restored store starts with (feeds/restore-record.ts): the backup's merged with the newer
// records (DATA_DIR's own, any an operator names), the higher version winning per feed, into DATA_DIR's file; a
// record of another feed secret refused by name. Real files in a temporary directory.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { mergeIntoDataDir } from '../../src/feeds/restore-record.ts';
import { BACKUP_ROTATIONS_FILE, type Rotation, RotationJournal } from '../../src/feeds/rotations.ts';

let dir: string;
let dataDir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'rostercal-restore-record-'));
  dataDir = path.join(dir, 'data');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const T = '2026-11-02T08:00:00.000Z';
const rot = (id: number, version: number): Rotation => ({
  school: 'north',
  scope: 'team',
  id,
  version,
  at: T,
});

/** A record file at `where` for `secret` (null: a file from before fingerprints) holding `rotations`. */
function record(where: string, secret: string | null, rotations: Rotation[]): string {
  const journal = new RotationJournal(path.dirname(where), path.basename(where));
  journal.create(secret ?? 'x');
  if (secret === null) writeFileSync(journal.file, '{"journal":"old"}\n');
  journal.append(rotations);
  return journal.file;
}

const merged = () =>
  [...new RotationJournal(dataDir).read().rotations.values()].map((r) => `${r.id}@${r.version}`);

it('makes DATA_DIR’s record from the backup’s alone, for the secret', () => {
  const backupRecord = record(path.join(dir, 'backup', BACKUP_ROTATIONS_FILE), 'fp', [rot(1, 2), rot(2, 3)]);
  expect(mergeIntoDataDir({ dataDir, fingerprint: 'fp', backupRecord, newer: [] })).toEqual({
    afterBackup: 0,
    total: 2,
  });
  expect(new RotationJournal(dataDir).read().secret).toBe('fp');
  expect(merged()).toEqual(['1@2', '2@3']);
});

it('keeps the rotations made after the backup, from DATA_DIR’s own record and from the ones named', () => {
  const backupRecord = record(path.join(dir, 'backup', BACKUP_ROTATIONS_FILE), 'fp', [rot(1, 2), rot(2, 3)]);
  record(path.join(dataDir, 'feed-rotations.jsonl'), 'fp', [rot(1, 4)]);
  const replica = record(path.join(dir, 'replica.jsonl'), null, [rot(2, 2), rot(3, 2)]);
  const result = mergeIntoDataDir({ dataDir, fingerprint: 'fp', backupRecord, newer: [replica] });
  expect(result).toEqual({ afterBackup: 2, total: 3 });
  expect(merged().sort()).toEqual(['1@4', '2@3', '3@2']);
  // Merging again adds nothing, and naming DATA_DIR's own file reads it once.
  const lines = () => readFileSync(path.join(dataDir, 'feed-rotations.jsonl'), 'utf8').split('\n').length;
  const before = lines();
  const again = mergeIntoDataDir({
    dataDir,
    fingerprint: 'fp',
    backupRecord,
    newer: [replica, path.join(dataDir, 'feed-rotations.jsonl')],
  });
  expect(again).toEqual({ afterBackup: 2, total: 3 });
  expect(merged().sort()).toEqual(['1@4', '2@3', '3@2']);
  expect(lines()).toBe(before);
});

it('refuses a record of another feed secret, naming it', () => {
  const backupRecord = record(path.join(dir, 'backup', BACKUP_ROTATIONS_FILE), 'fp', [rot(1, 2)]);
  const other = record(path.join(dir, 'other.jsonl'), 'fp-other', [rot(1, 9)]);
  expect(() => mergeIntoDataDir({ dataDir, fingerprint: 'fp', backupRecord, newer: [other] })).toThrow(
    `${other} is the rotation record of another feed secret than this backup's`,
  );
  expect(new RotationJournal(dataDir).exists()).toBe(false);
});
