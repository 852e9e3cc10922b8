// Child process for sqlite-processes.test.ts: opens the shared SQLite file and competes with its siblings.
// argv: file, worker name. Prints one JSON line: the fires it won.
import { openStore } from '../../src/store/index.ts';
import { session } from './fixtures.ts';

const [file, name] = process.argv.slice(2) as [string, string];
const store = await openStore({ file });
const won: string[] = [];
for (let i = 0; i < 10; i++) {
  await store.transaction(async (tx) => {
    await tx.upsert('s', 'sessions', [session(i, { title: `${name} ${i}` })], new Date().toISOString());
    await tx.setCursor('s', `cursor-${name}`, String(i));
  });
  const fire = new Date(Date.UTC(2026, 10, 22, 0, i)).toISOString();
  if (await store.claimFire('s:incremental', fire, name)) won.push(fire);
}
await store.close();
console.log(JSON.stringify(won));
