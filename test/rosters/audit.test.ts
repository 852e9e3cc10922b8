// "Every roster download is audited", on every path a roster leaves by: `rostercal roster -o FILE`, `-o -`,
// `--all -o DIR/`, `--date DAY -o DIR/` (every session of a day: the office's evening print), and
// `GET /rosters/teams/:id.pdf` on the real `rostercal serve`. Each path leaves exactly one
// audit record per roster; and when the audit write fails (the audit table refuses inserts: a trigger put on the
// real SQLite file for that test), no roster leaves at all: no file, no byte on standard output, no PDF in the
// directory, no PDF bytes over HTTP, and the documented exit code (1, a failure; not a crash).
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Session, Team } from '../../src/domain/types.ts';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import { pullSchool } from '../../src/sync/pull.ts';
import { rostercal, schoolEnv } from '../support/cli.ts';
import { expectPdf, pdfText, qpdfCheck } from '../support/pdf.ts';
import { freePort } from '../support/ports.ts';
import { openTestStore, type TestStore, testClient, testSchool } from '../sync/helpers.ts';

const NOW = '2026-11-20T00:00:00.000Z';
const ADMIN_TOKEN = 'audit-test-admin-token-0123456789abcdef';

let sandbox: Sandbox;
let ts: TestStore;
let env: Record<string, string>;
let teams: Team[];
let dir: string;

/**
 * The audit table refuses every insert, as a store that cannot take the write would. The serve beside it writes
 * too (heartbeats, pulls): the change waits its turn for the file's lock, as a second writer does, rather than
 * failing with "database is locked" (seen once in a run beside a second whole suite).
 */
function refuseAuditWrites(on: boolean): void {
  const db = new DatabaseSync(path.join(dir, 'rostercal.sqlite'), { timeout: 30_000 });
  try {
    db.exec('DROP TRIGGER IF EXISTS audit_refused');
    if (on)
      db.exec(
        "CREATE TRIGGER audit_refused BEFORE INSERT ON audit_log BEGIN SELECT RAISE(ABORT, 'audit log unwritable (test)'); END",
      );
  } finally {
    db.close();
  }
}

async function rosterRecords(): Promise<number> {
  return (await ts.store.access.listAudit({ action: 'roster' })).length;
}

async function roster(args: string[]) {
  const child = rostercal(['roster', ...args], env);
  const code = await child.exit;
  return { code, stdout: child.stdout(), output: child.output() };
}

beforeAll(async () => {
  sandbox = await startSandbox({ scale: 'small', seed: 7, now: NOW });
  ts = await openTestStore('sqlite');
  dir = ts.env.DATA_DIR!;
  const school = testSchool(sandbox);
  const summary = await pullSchool({
    store: ts.store,
    client: testClient(sandbox),
    school,
    kind: 'full',
    now: () => new Date(NOW),
  });
  expect(summary.status).toBe('succeeded');
  teams = (await ts.store.records.list(school.id, 'teams')).filter((t) => !t.hidden);
  expect(teams.length).toBeGreaterThan(1);
  // serve's clock starts where the sandbox's does: its pulls' window and "upcoming" hold on any date of the run.
  env = { ...schoolEnv(sandbox, ts.env), SANDBOX_NOW: NOW };
});
afterAll(async () => {
  await ts?.cleanup();
  await sandbox?.close();
});

describe('rostercal roster: one audit record per roster, on every path', () => {
  it('-o FILE, -o - and --all each leave one record per PDF, naming the path', async () => {
    const before = await rosterRecords();
    const file = path.join(dir, 'one.pdf');
    const one = await roster(['--team', String(teams[0]!.id), '-o', file]);
    expect(one.code, one.output).toBe(0);
    expect(existsSync(file)).toBe(true);
    const piped = await roster(['--team', String(teams[1]!.id), '-o', '-']);
    expect(piped.code, piped.output).toBe(0);
    expectPdf(piped.stdout);
    const all = path.join(dir, 'all');
    const every = await roster(['--all', '-o', all]);
    expect(every.code, every.output).toBe(0);
    expect(readdirSync(all).filter((f) => f.endsWith('.pdf'))).toHaveLength(teams.length);

    const records = (await ts.store.access.listAudit({ action: 'roster' })).slice(
      0,
      (await rosterRecords()) - before,
    );
    expect(records).toHaveLength(2 + teams.length);
    const viaAll = records.filter((r) => r.detail === 'rostercal roster --all');
    expect(viaAll.map((r) => r.teamId).sort()).toEqual(teams.map((t) => t.id).sort());
    const single = records.filter((r) => r.detail === 'rostercal roster');
    expect(single.map((r) => r.teamId).sort()).toEqual([teams[0]!.id, teams[1]!.id].sort());
    for (const r of records) expect(r.actor).toMatch(/^command line \(/);
  });

  it('an audit write that fails leaves no roster: no file, nothing on stdout, no PDF in the directory; exit 1', async () => {
    refuseAuditWrites(true);
    try {
      const before = await rosterRecords();
      const file = path.join(dir, 'refused.pdf');
      const one = await roster(['--team', String(teams[0]!.id), '-o', file]);
      expect(one.code, one.output).toBe(1);
      expect(one.output).toContain('audit log unwritable');
      expect(existsSync(file)).toBe(false);
      // No temporary file left behind either.
      expect(readdirSync(dir).filter((f) => f.startsWith('refused.pdf'))).toEqual([]);

      const piped = await roster(['--team', String(teams[0]!.id), '-o', '-']);
      expect(piped.code, piped.output).toBe(1);
      expect(piped.stdout).toBe('');

      const all = path.join(dir, 'all-refused');
      mkdirSync(all);
      const every = await roster(['--all', '-o', all]);
      expect(every.code, every.output).toBe(1);
      expect(every.output).toContain('audit log unwritable');
      expect(every.output).toContain(`wrote 0 of ${teams.length}`);
      expect(readdirSync(all)).toEqual([]);
      expect(await rosterRecords()).toBe(before);
    } finally {
      refuseAuditWrites(false);
    }
  });
});

// Each case runs the real CLI (a few seconds idle, much more on a loaded machine).
describe('rostercal roster --date: every session of a day, one PDF per session and team', {
  timeout: 240_000,
}, () => {
  const zone = 'Australia/Sydney';
  const localDay = (iso: string) =>
    new Intl.DateTimeFormat('en-CA', {
      timeZone: zone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
    }).format(new Date(iso));
  const localTime = (iso: string) =>
    new Intl.DateTimeFormat('en-GB', { timeZone: zone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' })
      .format(new Date(iso))
      .replace(':', '');
  /** The sheets a day needs, worked out here from the store: sessions starting that local day, not cancelled. */
  async function expectedSheets(day: string, fixturesOnly = false) {
    const visible = new Set(teams.map((t) => t.id));
    const sessions = (await ts.store.records.listSessions('hillcrest', {})).filter(
      (s) => !s.meta.deletedAt && localDay(s.start) === day,
    );
    const live = sessions.filter((s) => !s.cancelled && (!fixturesOnly || s.scored));
    return {
      sheets: live.flatMap((s) =>
        s.teams.filter((t) => visible.has(t.id)).map((t) => ({ session: s as Session, teamId: t.id })),
      ),
      cancelled: sessions.filter((s) => s.cancelled && s.teams.some((t) => visible.has(t.id))).length,
    };
  }
  /** The local day with the most sheets to print (preferring one with a cancelled session beside them). */
  async function busyDay(): Promise<string> {
    const sessions = (await ts.store.records.listSessions('hillcrest', {})).filter((s) => !s.meta.deletedAt);
    let best = { day: '', score: -1 };
    for (const day of new Set(sessions.map((s) => localDay(s.start)))) {
      const e = await expectedSheets(day);
      const score = e.sheets.length + (e.cancelled > 0 && e.sheets.length > 1 ? 1000 : 0);
      if (score > best.score) best = { day, score };
    }
    return best.day;
  }

  it('writes each sheet of the day, named by start time, each audited', async () => {
    const day = await busyDay();
    const { sheets } = await expectedSheets(day);
    expect(sheets.length).toBeGreaterThan(1);
    const before = await rosterRecords();
    const out = path.join(dir, `day-${day}`);
    const r = await roster(['--date', day, '-o', out]);
    expect(r.code, r.output).toBe(0);
    expect(r.output).toContain(`wrote ${sheets.length} of ${sheets.length} attendance-sheet PDFs`);
    const files = readdirSync(out).sort();
    expect(files).toHaveLength(sheets.length);
    for (const { session, teamId } of sheets) {
      const file = files.find(
        (f) => f.startsWith(`${localTime(session.start)}-`) && f.includes(`-${teamId}`),
      );
      expect(file, `${session.id}/${teamId} in ${files.join(', ')}`).toBeDefined();
    }
    // Each one the session's attendance sheet for its team.
    const first = sheets[0]!;
    const file = path.join(out, files.find((f) => f.includes(`-${first.teamId}`))!);
    await qpdfCheck(file);
    const text = await pdfText(file);
    expect(text).toContain('Attendance sheet');
    expect(text).toContain(teams.find((t) => t.id === first.teamId)!.name);

    const records = (await ts.store.access.listAudit({ action: 'roster' })).slice(
      0,
      (await rosterRecords()) - before,
    );
    expect(
      records.every((x) => x.detail === 'rostercal roster --date' && x.template === 'attendance-sheet'),
    ).toBe(true);
    const pairs = (xs: { sessionId: number | null; teamId: number | null }[]) =>
      xs.map((x) => `${x.sessionId}/${x.teamId}`).sort();
    expect(pairs(records)).toEqual(pairs(sheets.map((x) => ({ sessionId: x.session.id, teamId: x.teamId }))));
  });

  it('leaves out a session cancelled upstream, and says so', async () => {
    const day = await busyDay();
    const toCancel = (await expectedSheets(day)).sheets[0]!.session;
    const patched = await fetch(`${sandbox.url}/sessions`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${sandbox.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        email: sandbox.school.users.find((u) => !u.frozen)!.email,
        sessions: [{ id: toCancel.id, cancelled: true }],
      }),
    });
    expect(patched.status, await patched.text()).toBe(200);
    const pulled = await pullSchool({
      store: ts.store,
      client: testClient(sandbox),
      school: testSchool(sandbox),
      kind: 'full',
      now: () => new Date(NOW),
    });
    expect(pulled.status).toBe('succeeded');
    const { sheets, cancelled } = await expectedSheets(day);
    expect(cancelled).toBe(1);
    const out = path.join(dir, `day-${day}-after`);
    const r = await roster(['--date', day, '-o', out]);
    expect(r.code, r.output).toBe(0);
    expect(r.output).toContain(`wrote ${sheets.length} of ${sheets.length} attendance-sheet PDFs`);
    expect(r.output).toContain('left out: 1 cancelled session');
    expect(readdirSync(out)).toHaveLength(sheets.length);
    for (const f of readdirSync(out)) expect(f).not.toContain(`-${toCancel.teams[0]!.id}.pdf`);
  });

  it('with the match-day template, only the day’s fixtures', async () => {
    const sessions = (await ts.store.records.listSessions('hillcrest', {})).filter(
      (s) =>
        !s.meta.deletedAt &&
        !s.cancelled &&
        s.scored &&
        s.teams.some((t) => teams.some((v) => v.id === t.id)),
    );
    const day = localDay(sessions[0]!.start);
    const { sheets } = await expectedSheets(day, true);
    const out = path.join(dir, `fixtures-${day}`);
    const r = await roster(['--date', day, '--template', 'match-day-sheet', '-o', out]);
    expect(r.code, r.output).toBe(0);
    expect(readdirSync(out)).toHaveLength(sheets.length);
    for (const f of readdirSync(out)) expect(f).toContain('-match-day-sheet-');
  });

  it('a day without sessions writes nothing and says so (exit 0)', async () => {
    const out = path.join(dir, 'quiet-day');
    const r = await roster(['--date', '2031-01-01', '-o', out]);
    expect(r.code, r.output).toBe(0);
    expect(r.output).toContain('wrote 0 of 0 attendance-sheet PDFs');
    expect(readdirSync(out)).toEqual([]);
  });

  it('an audit write that fails leaves no sheet in the directory: exit 1, no record', async () => {
    const day = await busyDay();
    refuseAuditWrites(true);
    try {
      const before = await rosterRecords();
      const out = path.join(dir, 'day-refused');
      const r = await roster(['--date', day, '-o', out]);
      expect(r.code, r.output).toBe(1);
      expect(r.output).toContain('audit log unwritable');
      expect(r.output).toMatch(/wrote 0 of \d+ attendance-sheet PDFs/);
      expect(readdirSync(out)).toEqual([]);
      expect(await rosterRecords()).toBe(before);
    } finally {
      refuseAuditWrites(false);
    }
  });

  it('refuses what it cannot do with a usage error (exit 2), writing nothing', async () => {
    const out = path.join(dir, 'never');
    for (const [args, says] of [
      [['--date', '2026-13-45', '-o', out], '--date is not a real date: "2026-13-45" (there is no month 13)'],
      [['--date', 'tomorrow', '-o', out], '--date must be a day as YYYY-MM-DD'],
      [['--date', '2026-12-02', '--template', 'team-roster', '-o', out], 'not for a session'],
      [
        ['--date', '2026-12-02', '--team', String(teams[0]!.id), '-o', out],
        'leave out --all, --team and --session',
      ],
      [['--date', '2026-12-02', '-o', '-'], '-o must be a directory'],
      [['--date', '2026-12-02'], 'say where the PDF goes'],
    ] as const) {
      const r = await roster([...args]);
      expect(r.code, `${args.join(' ')}: ${r.output}`).toBe(2);
      expect(r.output).toContain(says);
      expect(r.stdout).toBe('');
    }
    expect(existsSync(out)).toBe(false);
  });
});

describe('GET /rosters/teams/:id.pdf on rostercal serve', () => {
  it('200 with one record; while the audit write fails, 500 with no PDF byte', async () => {
    const port = await freePort();
    const site = `http://127.0.0.1:${port}`;
    const child = rostercal(['serve'], { ...env, PORT: String(port), PUBLIC_URL: site, ADMIN_TOKEN });
    try {
      await child.waitFor(/Stop with Ctrl-C/, 90_000);
      const url = `${site}/rosters/teams/${teams[0]!.id}.pdf?template=team-roster`;
      const headers = { authorization: `Bearer ${ADMIN_TOKEN}` };
      const before = await rosterRecords();
      const ok = await fetch(url, { headers });
      expect(ok.status).toBe(200);
      expectPdf(await ok.arrayBuffer());
      expect(await rosterRecords()).toBe(before + 1);

      refuseAuditWrites(true);
      try {
        const refused = await fetch(url, { headers });
        expect(refused.status).toBe(500);
        expect(refused.headers.get('content-type') ?? '').not.toContain('pdf');
        expect(Buffer.from(await refused.arrayBuffer()).includes('%PDF')).toBe(false);
        expect(await rosterRecords()).toBe(before + 1);
      } finally {
        refuseAuditWrites(false);
      }
    } finally {
      child.proc.kill('SIGTERM');
      await child.exit;
    }
  }, 120_000);
});
