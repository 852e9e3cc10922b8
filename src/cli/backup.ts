// rostercal backup --out DIR: a consistent copy of what a restore needs, taken while serve runs (issue 44):
// the SQLite store (an online snapshot, store/sqlite-backup.ts), the feed rotation record and the feed secret.
import { chmodSync, copyFileSync, existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { ROTATIONS_FILE } from '../feeds/rotations.ts';
import { ensurePrivateDir } from '../private-files.ts';
import { sqlitePath } from '../store/index.ts';
import { backupSqlite } from '../store/sqlite-backup.ts';
import { printLines } from '../terminal.ts';
import { defineCommand, EXIT, UsageError } from './command.ts';

const USAGE = `usage: rostercal backup --out DIR

Writes a consistent backup of DATA_DIR into DIR (new or empty), safe while rostercal serve runs: the SQLite
store (rostercal.sqlite, an online snapshot), the feed rotation record (${ROTATIONS_FILE}) and the feed secret
(feed-secret; with FEED_SECRET set, keep that value yourself). To restore: stop serve, copy DIR's files into an
empty DATA_DIR (mode 0700), start serve. PostgreSQL (DATABASE_URL): see README "Backup and restore".`;

const PRIVATE = 0o600;

export const run = defineCommand({
  name: 'backup',
  usage: USAGE,
  options: { out: { type: 'string' } },
  async run(ctx) {
    const out = ctx.values.out;
    if (typeof out !== 'string' || !out) throw new UsageError('--out DIR is required');
    const config = await ctx.config();
    if (config.databaseUrl)
      throw new UsageError(
        'backup copies a SQLite store; for PostgreSQL dump the database and copy DATA_DIR/feed-rotations.jsonl (README: Backup and restore)',
      );
    if (existsSync(out) && readdirSync(out).length)
      throw new UsageError(`${out} is not empty: give a new or empty directory`);
    ensurePrivateDir(out);
    const started = Date.now();
    const dest = path.join(out, 'rostercal.sqlite');
    backupSqlite(sqlitePath({ dataDir: config.dataDir }), dest);
    chmodSync(dest, PRIVATE);
    const copied = ['rostercal.sqlite'];
    for (const name of [ROTATIONS_FILE, ...(config.feedSecret ? [] : ['feed-secret'])]) {
      const from = path.join(config.dataDir, name);
      if (!existsSync(from)) continue;
      copyFileSync(from, path.join(out, name));
      chmodSync(path.join(out, name), PRIVATE);
      copied.push(name);
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
