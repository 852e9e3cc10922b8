import { openStore } from '../../src/store/index.ts';
import { createTestDatabase, waitUntilBlockedOnLock } from '../support/pg.ts';
import { describeStoreContract } from './contract.ts';

describeStoreContract('postgres', async () => {
  const db = await createTestDatabase();
  return {
    open: (opts) => openStore({ databaseUrl: db.url, poolSize: 4, ...opts }),
    drop: () => db.drop(),
    writerWaiting: () => waitUntilBlockedOnLock(db.url),
  };
});
