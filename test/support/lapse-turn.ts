// A turn in the job queue (store/fire-queue.ts) lapsed as a stalled holder's does: its heartbeat made older than
// the queue's heartbeat in pg-boss's own table, then failed by pg-boss's own monitor (every 2 s), as when the holder's
// beats stop. The holder's beat in this process may refresh it first (it keeps beating while a test holds it at a
// door, where a stopped process would not): it is made old again at each look until pg-boss has failed it.
import pg from 'pg';
import { turnQueueName } from '../../src/store/fire-queue.ts';
import { until } from './until.ts';

/** Lapses the school's pull turn; resolves once pg-boss has failed it (heartbeat timeout). */
export async function lapsePullTurn(databaseUrl: string, schoolId: string): Promise<void> {
  const name = turnQueueName('pull', schoolId);
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ table_name: string }>(
      'select table_name from queue where name = $1',
      [name],
    );
    const table = pg.escapeIdentifier(rows[0]!.table_name);
    const active = await client.query<{ id: string }>(
      `select id from ${table} where name = $1 and state = 'active'`,
      [name],
    );
    if (active.rows.length !== 1) throw new Error(`no turn held in ${name}`);
    const id = active.rows[0]!.id;
    await until(
      `pg-boss failed the turn of ${name}`,
      async () => {
        await client.query(
          `update ${table} set heartbeat_on = least(heartbeat_on, now() - interval '1 hour')
           where id = $1 and state = 'active'`,
          [id],
        );
        const { rows: state } = await client.query<{ state: string }>(
          `select state from ${table} where id = $1`,
          [id],
        );
        return state[0]?.state === 'failed';
      },
      60_000,
      200,
    );
  } finally {
    await client.end();
  }
}
