// "Every roster download is audited", on every path a roster leaves by: `rostercal roster -o FILE`, `-o -`,
// `--all -o DIR/`, and `GET /rosters/teams/:id.pdf` on the real `rostercal serve`. Each path leaves exactly one
// audit record per roster; and when the audit write fails (the audit table refuses inserts: a trigger put on the
// real SQLite file for that test), no roster leaves at all: no file, no byte on standard output, no PDF in the
// directory, no PDF bytes over HTTP, and the documented exit code (1, a failure; not a crash).
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Team } from '../../src/domain/types.ts';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import { pullSchool } from '../../src/sync/pull.ts';
import { rostercal, schoolEnv } from '../support/cli.ts';
import { freePort } from '../support/ports.ts';
import { openTestStore, type TestStore, testClient, testSchool } from '../sync/helpers.ts';

const NOW = '2026-11-20T00:00:00.000Z';
const ADMIN_TOKEN = 'audit-test-admin-token-0123456789abcdef';

let sandbox: Sandbox;
let ts: TestStore;
let env: Record<string, string>;
let teams: Team[];
let dir: string;

/** The audit table refuses every insert, as a store that cannot take the write would. */
function refuseAuditWrites(on: boolean): void {
  const db = new DatabaseSync(path.join(dir, 'rostercal.sqlite'));
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
  return (await ts.store.listAudit({ action: 'roster' })).length;
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
  teams = (await ts.store.list(school.id, 'teams')).filter((t) => !t.hidden);
  expect(teams.length).toBeGreaterThan(1);
  env = schoolEnv(sandbox, ts.env);
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
    expect(piped.stdout.startsWith('%PDF-')).toBe(true);
    const all = path.join(dir, 'all');
    const every = await roster(['--all', '-o', all]);
    expect(every.code, every.output).toBe(0);
    expect(readdirSync(all).filter((f) => f.endsWith('.pdf'))).toHaveLength(teams.length);

    const records = (await ts.store.listAudit({ action: 'roster' })).slice(
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
      expect(
        Buffer.from(await ok.arrayBuffer())
          .subarray(0, 5)
          .toString(),
      ).toBe('%PDF-');
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
