// npm run bench:store — the store's share of a first sync at `school` scale (6,000 sessions, 120 teams,
// 1,200 students), on SQLite and PostgreSQL: first write, unchanged rewrite, and a student's feed query.
// Baseline: computing the stable JSON + hash of the same records (the work no store can avoid).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Session, Student, Team } from '../src/domain/types.ts';
import { openStore } from '../src/store/index.ts';
import { contentHash } from '../src/store/kinds.ts';
import type { Store } from '../src/store/types.ts';
import { stableStringify } from '../src/util/stable-json.ts';
import {
  member,
  session,
  sessionStaff,
  sessionStudent,
  sessionTeam,
  student,
  team,
} from '../test/store/fixtures.ts';
import { createTestDatabase, useTestPostgres } from '../test/support/pg.ts';
import { startPostgresServer } from '../test/support/postgres-server.ts';

const SESSIONS = 6000;
const TEAMS = 120;
const STUDENTS = 1200;
const AT = '2026-11-22T00:00:00.000Z';

function data(): { sessions: Session[]; teams: Team[]; students: Student[] } {
  const students = Array.from({ length: STUDENTS }, (_, i) => student(i + 1, { yearGroupId: (i % 7) + 7 }));
  const teams = Array.from({ length: TEAMS }, (_, t) =>
    team(t + 1, [], {
      students: Array.from({ length: 15 }, (_, k) => member(((t * 10 + k) % STUDENTS) + 1)),
      staff: [{ id: 500 + (t % 60), firstName: 'Coach', lastName: `${t}`, sisId: null }],
    }),
  );
  const base = Date.parse('2026-09-01T15:00:00.000Z');
  const sessions = Array.from({ length: SESSIONS }, (_, i) => {
    const start = base + Math.floor(i / 20) * 86_400_000 + (i % 5) * 3_600_000;
    return session(i + 1, {
      title: `Practice ${i + 1}`,
      notes: 'Bring water and boots. '.repeat(3),
      start: new Date(start).toISOString(),
      end: new Date(start + 5_400_000).toISOString(),
      activity: { id: (i % 12) + 1, name: 'Activity', department: null, hexColor: '#336699' },
      teams: [sessionTeam((i % TEAMS) + 1), ...(i % 7 === 0 ? [sessionTeam(((i + 1) % TEAMS) + 1)] : [])],
      staff: [sessionStaff(500 + (i % 60)), sessionStaff(560 + (i % 30))],
      students:
        i % 10 === 0 ? [sessionStudent((i % STUDENTS) + 1), sessionStudent(((i + 7) % STUDENTS) + 1)] : [],
    });
  });
  return { sessions, teams, students };
}

async function time<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const t0 = performance.now();
  const out = await fn();
  return [out, performance.now() - t0];
}

async function measure(label: string, store: Store, d: ReturnType<typeof data>, baselineMs: number) {
  const [, first] = await time(() =>
    store.transaction(async (tx) => {
      await tx.records.upsert('s', 'students', d.students, AT);
      await tx.records.upsert('s', 'teams', d.teams, AT);
      await tx.records.upsert('s', 'sessions', d.sessions, AT);
    }),
  );
  const [, again] = await time(async () => {
    await store.records.upsert('s', 'students', d.students, AT);
    await store.records.upsert('s', 'teams', d.teams, AT);
    await store.records.upsert('s', 'sessions', d.sessions, AT);
  });
  const [rows, query] = await time(() => store.records.listSessions('s', { studentId: 15 }));
  const [all, readAll] = await time(() => store.records.list('s', 'sessions'));
  console.log(
    `${label.padEnd(9)} first write ${first.toFixed(0).padStart(5)} ms (${(first / baselineMs).toFixed(1)}× baseline)` +
      `  unchanged rewrite ${again.toFixed(0).padStart(4)} ms` +
      `  student query ${query.toFixed(1)} ms (${rows.length} sessions)` +
      `  read all ${readAll.toFixed(0)} ms (${all.length})`,
  );
}

const d = data();
const [, baselineMs] = await time(async () => {
  for (const r of [...d.students, ...d.teams, ...d.sessions]) contentHash(stableStringify(r));
});
console.log(
  `${SESSIONS} sessions, ${TEAMS} teams, ${STUDENTS} students; baseline (stable JSON + hash) ${baselineMs.toFixed(0)} ms`,
);

const dir = mkdtempSync(join(tmpdir(), 'rostercal-bench-'));
const sqlite = await openStore({ dataDir: dir });
try {
  await measure('sqlite', sqlite, d, baselineMs);
} finally {
  await sqlite.close();
  rmSync(dir, { recursive: true, force: true });
}

// TEST_DATABASE_URL names a server to measure; otherwise a durable embedded PostgreSQL of its own.
const pgServer = await startPostgresServer({ durable: true });
useTestPostgres(pgServer.adminUrl);
const pgDb = await createTestDatabase();
const pgStore = await openStore({ databaseUrl: pgDb.url });
try {
  await measure('postgres', pgStore, d, baselineMs);
} finally {
  await pgStore.close();
  await pgDb.drop();
  await pgServer.stop();
}
