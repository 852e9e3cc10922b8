// rostercal backup --out DIR: a consistent copy of what a restore needs, taken while serve runs (issue 44):
// the store (SQLite: an online snapshot, store/sqlite-backup.ts; PostgreSQL: pg_dump, store/pg-backup.ts), the
// feed rotation record as it stood (under a name of its own: a backup never vouches for the secret by itself, see
// feeds/restore-record.ts) and the feed secret.
import { chmodSync, copyFileSync, existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import {
  BACKUP_ROTATIONS_FILE,
  ROTATIONS_FILE,
  RotationJournal,
  secretFingerprint,
} from '../feeds/rotations.ts';
import { loadFeedSecret } from '../feeds/tokens.ts';
import { ensurePrivateDir } from '../private-files.ts';
import { sqlitePath } from '../store/index.ts';
import { dumpPostgres } from '../store/pg-backup.ts';
import { backupSqlite } from '../store/sqlite-backup.ts';
import { printLines } from '../terminal.ts';
import { defineCommand, EXIT, UsageError } from './command.ts';

export const SQLITE_BACKUP = 'rostercal.sqlite';
export const POSTGRES_BACKUP = 'rostercal.pgdump';

const USAGE = `usage: rostercal backup --out DIR

Writes a consistent backup into DIR (new or empty), safe while rostercal serve runs: the store (SQLite:
${SQLITE_BACKUP}, an online snapshot; PostgreSQL (DATABASE_URL): ${POSTGRES_BACKUP} by pg_dump, which must be on
PATH), the feed rotation record as it stood (${BACKUP_ROTATIONS_FILE}) and the feed secret (feed-secret; with
FEED_SECRET set, keep that value yourself). Restore it with rostercal restore --from DIR.`;

const PRIVATE = 0o600;

export const run = defineCommand({
  name: 'backup',
  usage: USAGE,
  options: { out: { type: 'string' } },
  async run(ctx) {
    const out = ctx.values.out;
    if (typeof out !== 'string' || !out) throw new UsageError('--out DIR is required');
    const config = await ctx.config();
    if (existsSync(out) && !statSync(out).isDirectory())
      throw new UsageError(`${out} is a file: give a new or empty directory`);
    if (existsSync(out) && readdirSync(out).length)
      throw new UsageError(`${out} is not empty: give a new or empty directory`);
    const storePath = sqlitePath({ dataDir: config.dataDir });
    // Before the secret: without a store its error would speak of a database holding URLs of another secret.
    if (!config.databaseUrl && !existsSync(storePath))
      throw new UsageError(
        `no store to back up: ${storePath} does not exist (is DATA_DIR the one serve uses?)`,
      );
    const secret = loadFeedSecret({ secret: config.feedSecret, dataDir: config.dataDir, create: false });
    ensurePrivateDir(out);
    const started = Date.now();
    const store = config.databaseUrl ? POSTGRES_BACKUP : SQLITE_BACKUP;
    const dest = path.join(out, store);
    if (config.databaseUrl) await dumpPostgres(config.databaseUrl, dest);
    else backupSqlite(storePath, dest);
    chmodSync(dest, PRIVATE);
    // The record as this DATA_DIR keeps it; without one (a machine that never served), a record of no rotation
    // for this secret: the store's own tokens carry every rotation made before the backup.
    const record = path.join(config.dataDir, ROTATIONS_FILE);
    if (existsSync(record)) copyFileSync(record, path.join(out, BACKUP_ROTATIONS_FILE));
    else new RotationJournal(out, BACKUP_ROTATIONS_FILE).create(secretFingerprint(secret));
    chmodSync(path.join(out, BACKUP_ROTATIONS_FILE), PRIVATE);
    const copied = [store, BACKUP_ROTATIONS_FILE];
    if (!config.feedSecret) {
      copyFileSync(path.join(config.dataDir, 'feed-secret'), path.join(out, 'feed-secret'));
      chmodSync(path.join(out, 'feed-secret'), PRIVATE);
      copied.push('feed-secret');
    }
    const bytes = copied.reduce((n, f) => n + statSync(path.join(out, f)).size, 0);
    printLines([
      `backup written to ${path.resolve(out)} in ${((Date.now() - started) / 1000).toFixed(1)} s: ${copied.join(', ')} (${(bytes / 1_048_576).toFixed(1)} MB)`,
      ...(config.feedSecret
        ? ['FEED_SECRET is set: keep its value with this backup (it is not written here)']
        : []),
    ]);
    return EXIT.ok;
  },
});
