import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../../src/store/index.ts';
import { describeStoreContract } from './contract.ts';

describeStoreContract('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rostercal-store-'));
  return {
    open: (opts) => openStore({ dataDir: dir, ...opts }),
    drop: async () => rmSync(dir, { recursive: true, force: true }),
  };
});
