// Runs one push in a child process, so a test can kill it (SIGKILL) in the middle of writing.
// Input (env PUSH_CHILD): { dbFile, school: { id, name, timeZone }, targets: raw targets list, now: the test's clock
// (ISO), which then runs on from it as the sandbox's does }.

import { parseTargets } from '../../src/config/push-targets.ts';
import { pushTarget } from '../../src/push/run.ts';
import { openStore } from '../../src/store/index.ts';

const input = JSON.parse(process.env.PUSH_CHILD ?? '{}') as {
  dbFile: string;
  school: { id: string; name: string; timeZone: string };
  targets: unknown[];
  now: string;
};
const offset = Date.parse(input.now) - Date.now();
const [target] = parseTargets(input.targets, 'targets', process.env);
const store = await openStore({ file: input.dbFile });
process.stdout.write('started\n');
const summary = await pushTarget({
  store,
  school: input.school,
  target: target!,
  chunkSize: 10,
  now: () => new Date(Date.now() + offset),
});
process.stdout.write(`${JSON.stringify(summary.totals)}\n`);
await store.close();
