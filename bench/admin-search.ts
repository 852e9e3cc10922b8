// node bench/admin-search.ts [DATA_DIR] — how long /admin's calendar search takes (issue 44: under 300 ms at
// district scale, 13,700 feeds), over a store a `rostercal sync --full` filled (default: a fresh district-scale
// sandbox school pulled into a temporary DATA_DIR first). Times searchCalendars as GET /admin/search calls it:
// a common surname, a full name in Cyrillic, a student id, a pasted feed URL, and a name nobody has; each query
// 7 times (first, then the median of the rest), on SQLite.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { personName } from '../src/calendar/context.ts';
import { CalendarSearch } from '../src/feeds/calendar-search.ts';
import { FeedTokens, openFeedSecret } from '../src/feeds/tokens.ts';
import { startSandbox } from '../src/sandbox/index.ts';
import { openStore } from '../src/store/index.ts';
import { pullSchool } from '../src/sync/pull.ts';
import { testClient, testSchool } from '../test/sync/helpers.ts';

const given = process.argv[2];
const dir = given ?? mkdtempSync(path.join(tmpdir(), 'rostercal-search-bench-'));
if (!given) {
  const sandbox = await startSandbox({ seed: 1, scale: 'district' });
  const filling = await openStore({ dataDir: dir });
  const started = performance.now();
  await pullSchool({
    store: filling,
    client: testClient(sandbox),
    school: testSchool(sandbox),
    kind: 'full',
  });
  console.log(`district pulled in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  await filling.close();
  await sandbox.close();
}
const store = await openStore({ dataDir: dir });
const school = (await store.records.listSchools())[0]!;
const subjects = await store.records.listCalendarSubjects(school.id);
const students = (await store.records.list(school.id, 'students')).filter((s) => s.current);
const surnames = new Map<string, number>();
for (const s of students) surnames.set(s.lastName, (surnames.get(s.lastName) ?? 0) + 1);
const common = [...surnames].sort((a, b) => b[1] - a[1])[0]![0];
const cyrillic = students.find((s) => /\p{Script=Cyrillic}/u.test(s.lastName))!;
const tokens = new FeedTokens(store, openFeedSecret({ dataDir: dir, create: true }).secret);
const child = students[Math.floor(students.length / 2)]!;
const url = `https://cal.example.org/feeds/${(await tokens.ensure(school.id, 'student', child.id)).token}`;
console.log(`${subjects.length} calendars (${students.length} current students) in ${school.id}`);
const queries: [string, string][] = [
  ['common surname', common],
  ['Cyrillic full name, lower case', personName(cyrillic).toLowerCase()],
  ['student id', String(child.id)],
  ['pasted feed URL', url],
  ['nobody', 'Zzyzx Qwerty'],
];
// As serve's /admin: one search object, its index made by the first search (timed apart) and kept.
const search = new CalendarSearch(store);
const cold = performance.now();
await search.counts(school.id);
console.log(
  `index of the school's names made in ${(performance.now() - cold).toFixed(1)} ms (once per data version)`,
);
for (const [what, q] of queries) {
  const ms: number[] = [];
  let hits = 0;
  for (let i = 0; i < 7; i++) {
    const t = performance.now();
    const answer = await search.search([school], q);
    ms.push(performance.now() - t);
    hits = answer.hits.length + answer.more;
  }
  const rest = ms.slice(1).sort((a, b) => a - b);
  console.log(
    `${what.padEnd(32)} ${String(hits).padStart(5)} matches  first ${ms[0]!.toFixed(1)} ms, median ${rest[3]!.toFixed(1)} ms, max ${rest.at(-1)!.toFixed(1)} ms`,
  );
}
await store.close();
if (!given) rmSync(dir, { recursive: true, force: true });
