// rostercal restore --from DIR: a backup (`rostercal backup`) into a DATA_DIR without a store (and, for PostgreSQL,
// an empty database), with the newest rotation record there is, so that no URL rotated after the backup comes back
// (issue 44; feeds/restore-record.ts). Without a record newer than the backup's it refuses unless told that none
// exists: a rotated link working again is the one thing a restore must never do quietly.
import { chmodSync, copyFileSync, existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { mergeIntoDataDir } from '../feeds/restore-record.ts';
import {
  BACKUP_ROTATIONS_FILE,
  ROTATIONS_FILE,
  RotationJournal,
  secretFingerprint,
} from '../feeds/rotations.ts';
import { loadFeedSecret } from '../feeds/tokens.ts';
import { ensurePrivateDir } from '../private-files.ts';
import { sqlitePath } from '../store/index.ts';
import { postgresTables, restorePostgres } from '../store/pg-backup.ts';
import { backupSqlite } from '../store/sqlite-backup.ts';
import { printError, printLines } from '../terminal.ts';
import { POSTGRES_BACKUP, SQLITE_BACKUP } from './backup.ts';
import { defineCommand, EXIT, UsageError } from './command.ts';

const USAGE = `usage: rostercal restore --from DIR [--record FILE]... [--without-newer-record]

Restores a backup written by rostercal backup into DATA_DIR, which must hold no store (stop serve, move the old
rostercal.sqlite aside), or for PostgreSQL into the empty database DATABASE_URL names (pg_restore on PATH).

The backup's rotation record knows only the rotations made before it. Give the newest record there is, so every
feed URL rotated since stays dead and its replacement answers: DATA_DIR's own ${ROTATIONS_FILE} is used when
present (restoring in place), and --record FILE adds another (a replica's DATA_DIR/${ROTATIONS_FILE}, the old
machine's). If none survives, --without-newer-record restores with the backup's record alone: URLs rotated after
the backup then work again (set a new FEED_SECRET instead to change every URL, and none can come back).`;

function backupRecordOf(from: string): string {
  const named = path.join(from, BACKUP_ROTATIONS_FILE);
  // Backups written before the record had a name of its own.
  return existsSync(named) ? named : path.join(from, ROTATIONS_FILE);
}

/** The feed secret's fingerprint; copies the backup's secret file into DATA_DIR when FEED_SECRET is not set. */
function placeSecret(from: string, dataDir: string, feedSecret: string | null | undefined): string {
  if (feedSecret) return secretFingerprint(loadFeedSecret({ secret: feedSecret }));
  const inBackup = path.join(from, 'feed-secret');
  if (!existsSync(inBackup))
    throw new UsageError(`${from} holds no feed-secret: set FEED_SECRET to the value kept with this backup`);
  const here = path.join(dataDir, 'feed-secret');
  if (existsSync(here)) {
    if (readFileSync(here, 'utf8').trim() !== readFileSync(inBackup, 'utf8').trim())
      throw new UsageError(`${here} is another feed secret than the backup's: move it aside first`);
  } else {
    copyFileSync(inBackup, here);
    chmodSync(here, 0o600);
  }
  return secretFingerprint(loadFeedSecret({ dataDir, create: false }));
}

export const run = defineCommand({
  name: 'restore',
  usage: USAGE,
  options: {
    from: { type: 'string' },
    record: { type: 'string', multiple: true },
    'without-newer-record': { type: 'boolean' },
  },
  async run(ctx) {
    const from = ctx.values.from;
    if (typeof from !== 'string' || !from) throw new UsageError('--from DIR is required');
    const config = await ctx.config();
    const pg = config.databaseUrl;
    const storeFile = path.join(from, pg ? POSTGRES_BACKUP : SQLITE_BACKUP);
    if (!existsSync(storeFile))
      throw new UsageError(
        existsSync(path.join(from, pg ? SQLITE_BACKUP : POSTGRES_BACKUP))
          ? `${from} is a backup of a ${pg ? 'SQLite' : 'PostgreSQL'} store: ${pg ? 'unset' : 'set'} DATABASE_URL`
          : `${from} holds no rostercal backup (${path.basename(storeFile)})`,
      );
    const backupRecord = backupRecordOf(from);
    // Checked before DATA_DIR is touched: a backup without its record is incomplete (copied in part), and the
    // operator should hear which file is missing, not a bare ENOENT after the secret was already placed.
    if (!existsSync(backupRecord))
      throw new UsageError(
        `${from} holds no ${BACKUP_ROTATIONS_FILE}: this backup is incomplete; copy the whole directory rostercal backup wrote`,
      );
    const newer = ctx.values.record ?? [];
    for (const f of newer) if (!existsSync(f)) throw new UsageError(`--record ${f}: no such file`);
    const own = new RotationJournal(config.dataDir).exists();
    if (!newer.length && !own && !ctx.values['without-newer-record'])
      throw new UsageError(
        `the backup's rotation record knows only the rotations made before it: give the newest record there is with --record FILE (a running replica's or the old machine's DATA_DIR/${ROTATIONS_FILE}), or, if none survives, --without-newer-record (URLs rotated after the backup then work again)`,
      );
    if (pg) {
      if ((await postgresTables(pg)) > 0)
        throw new UsageError('the database DATABASE_URL names is not empty: restore into a new database');
    } else if (existsSync(sqlitePath({ dataDir: config.dataDir })))
      throw new UsageError(
        `${sqlitePath({ dataDir: config.dataDir })} exists: stop serve and move it aside, then restore`,
      );
    ensurePrivateDir(config.dataDir);
    const fingerprint = placeSecret(from, config.dataDir, config.feedSecret);
    const backupOwn = new RotationJournal(from, path.basename(backupRecord)).read().secret;
    if (backupOwn !== null && backupOwn !== fingerprint)
      throw new UsageError('FEED_SECRET is not the feed secret this backup was made with');
    const started = Date.now();
    if (pg) await restorePostgres(pg, storeFile);
    else {
      const dest = sqlitePath({ dataDir: config.dataDir });
      // A copy that also drops a rotation record row a backup from before issue 44's restore still carried.
      backupSqlite(storeFile, dest);
      chmodSync(dest, 0o600);
    }
    const merged = mergeIntoDataDir({ dataDir: config.dataDir, fingerprint, backupRecord, newer });
    printLines(
      `restored ${path.resolve(from)} into ${pg ? 'the database DATABASE_URL names' : path.resolve(config.dataDir)} in ${((Date.now() - started) / 1000).toFixed(1)} s: ${merged.total} rotation(s) recorded, ${merged.afterBackup} rotation(s) made after the backup (those URLs stay dead; their replacements answer). Start rostercal serve.`,
    );
    if (!newer.length && !own)
      printError(
        'rostercal restore: warning: no rotation record newer than the backup was given: a feed URL rotated after the backup works again until rotated anew',
      );
    return EXIT.ok;
  },
});
