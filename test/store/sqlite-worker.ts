// Child process for sqlite-processes.test.ts, on a shared SQLite file.
// argv: file, worker name, mode. `compete`: 10 write transactions. `hold`: holds a write transaction, printing `locked` once it has the lock, until a line (or the end) on stdin lets go.
import { openStore } from '../../src/store/index.ts';
import { session } from './fixtures.ts';

const [file, name, mode = 'compete'] = process.argv.slice(2) as [string, string, string?];
const store = await openStore({ file });
if (mode === 'hold') {
  await store.transaction(async (tx) => {
    await tx.records.setCursor('s', 'held', name);
    console.log('locked');
    // Held until the test lets go, not for a length of time: the test decides when it has seen enough waiting.
    await new Promise<void>((resolve) => {
      process.stdin.once('data', () => resolve());
      process.stdin.once('end', () => resolve());
    });
    process.stdin.destroy();
  });
} else {
  for (let i = 0; i < 10; i++) {
    await store.transaction(async (tx) => {
      await tx.records.upsert(
        's',
        'sessions',
        [session(i, { title: `${name} ${i}` })],
        new Date().toISOString(),
      );
      await tx.records.setCursor('s', `cursor-${name}`, String(i));
    });
  }
}
await store.close();
