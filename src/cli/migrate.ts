// rostercal migrate: applies pending store migrations to the configured database (databaseUrl / DATABASE_URL
// for PostgreSQL, else the SQLite file under dataDir / DATA_DIR, default ./data).
import { openStoreFor, sqlitePath } from '../store/index.ts';
import { defineCommand, EXIT } from './command.ts';

const USAGE = `usage: rostercal migrate

Applies pending store migrations to the configured database and prints what it did:
PostgreSQL when databaseUrl (config file) or DATABASE_URL is set, else SQLite rostercal.sqlite in dataDir /
DATA_DIR (default ./data).`;

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
  options: {},
  async run(ctx) {
    const config = await ctx.config();
    const where = config.databaseUrl
      ? describeUrl(config.databaseUrl)
      : `SQLite ${sqlitePath({ dataDir: config.dataDir })}`;
    const store = await openStoreFor(config, { migrate: false });
    try {
      const applied = await store.migrate();
      if (applied.length === 0) console.log(`${where}: schema up to date`);
      else console.log(`${where}: applied ${applied.length} migration(s): ${applied.join(', ')}`);
      return EXIT.ok;
    } finally {
      await store.close();
    }
  },
});
