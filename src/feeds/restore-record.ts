// Which rotation record a restored store starts with (`rostercal restore`, issue 44). A backup's record knows only
// the rotations made before it; a URL rotated after the backup stays dead only if a newer record says so. The
// newest records there are (this DATA_DIR's own file, kept when the store is restored in place; any file an
// operator names: a replica's, the lost machine's) are merged with the backup's, rotation by rotation (the higher
// version wins), into DATA_DIR/feed-rotations.jsonl; serve then issues the replacement of every rotation the
// restored store lacks and keeps the rotated URL dead (rotations.ts, reconcileRotations).
import path from 'node:path';
import { type JournalContents, latestVersions, type Rotation, RotationJournal } from './rotations.ts';

export interface MergedRecord {
  /** Rotations the newer records hold that the backup's lacks (made after the backup). */
  afterBackup: number;
  /** Every rotation in the merged record. */
  total: number;
}

const readAt = (file: string): JournalContents =>
  new RotationJournal(path.dirname(file), path.basename(file)).read();

/**
 * Merges the backup's record and the newer ones into `dataDir`'s file (created for `fingerprint` when absent).
 * Throws naming a record that vouches for another feed secret: its rotations name URLs this secret never made.
 */
export function mergeIntoDataDir(opts: {
  dataDir: string;
  fingerprint: string;
  backupRecord: string;
  newer: readonly string[];
}): MergedRecord {
  const journal = new RotationJournal(opts.dataDir);
  const files = [opts.backupRecord, ...opts.newer.filter((f) => path.resolve(f) !== journal.file)];
  if (journal.exists()) files.push(journal.file);
  const contents = files.map((f) => ({ file: f, record: readAt(f) }));
  for (const { file, record } of contents)
    if (record.secret !== null && record.secret !== opts.fingerprint)
      throw new Error(
        `${file} is the rotation record of another feed secret than this backup's: give the record of the running service (DATA_DIR/feed-rotations.jsonl)`,
      );
  const all = latestVersions(contents.flatMap(({ record }) => [...record.rotations.values()]));
  const fromBackup = contents[0]!.record.rotations;
  const afterBackup = [...all].filter(([k, r]) => (fromBackup.get(k)?.version ?? 1) < r.version).length;
  if (!journal.exists()) journal.create(opts.fingerprint);
  const have = journal.read().rotations;
  const missing: Rotation[] = [...all]
    .filter(([k, r]) => (have.get(k)?.version ?? 1) < r.version)
    .map(([, r]) => r);
  journal.append(missing);
  return { afterBackup, total: all.size };
}
