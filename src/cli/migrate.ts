// rostercal migrate: applies pending store migrations to the configured database (databaseUrl / DATABASE_URL
// for PostgreSQL, else the SQLite file under dataDir / DATA_DIR, default ./data).
import { openStoreFor, sqlitePath } from '../store/index.ts';
import { compactSqlite } from '../store/sqlite-compact.ts';
import { printLines } from '../terminal.ts';
import { defineCommand, EXIT, UsageError } from './command.ts';

const USAGE = `usage: rostercal migrate [--compact]

Applies pending store migrations to the configured database and prints what it did:
PostgreSQL when databaseUrl (config file) or DATABASE_URL is set, else SQLite rostercal.sqlite in dataDir /
DATA_DIR (default ./data).

  --compact   SQLite only, with rostercal stopped: then rebuilds the file, giving back the space of deleted
              records and moving a store made before 16 KB pages to them (faster writes of sessions)`;

const mb = (bytes: number) => `${(bytes / 1_048_576).toFixed(1)} MB`;

/** The database a URL points at, without credentials: fit to print. */
function describeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `PostgreSQL ${u.hostname}${u.port ? `:${u.port}` : ''}${u.pathname}`;
  } catch {
    return 'PostgreSQL (DATABASE_URL)';
  }
}

export const run = defineCommand({
  name: 'migrate',
  usage: USAGE,
  options: { compact: { type: 'boolean' } },
  async run(ctx) {
    const config = await ctx.config();
    if (ctx.values.compact && config.databaseUrl) {
      throw new UsageError(
        '--compact is for SQLite stores (PostgreSQL gives space back with its own VACUUM)',
      );
    }
    const where = config.databaseUrl
      ? describeUrl(config.databaseUrl)
      : `SQLite ${sqlitePath({ dataDir: config.dataDir })}`;
    const store = await openStoreFor(config, { migrate: false });
    try {
      const applied = await store.migrate();
      printLines(
        applied.length === 0
          ? `${where}: schema up to date`
          : `${where}: applied ${applied.length} migration(s): ${applied.join(', ')}`,
      );
    } finally {
      await store.close();
    }
    if (!ctx.values.compact) return EXIT.ok;
    const file = sqlitePath({ dataDir: config.dataDir });
    const started = Date.now();
    // A store another process has open is refused (StoreInUseError: exit 1, naming what to stop).
    const r = compactSqlite(file);
    printLines(
      `${where}: compacted in ${((Date.now() - started) / 1000).toFixed(1)} s: ${mb(r.bytesBefore)} → ` +
        `${mb(r.bytesAfter)}, pages ${r.pageSizeBefore / 1024} KB → ${r.pageSizeAfter / 1024} KB`,
    );
    return EXIT.ok;
  },
});
