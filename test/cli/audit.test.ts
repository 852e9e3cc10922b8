// `rostercal audit` as a child process over a real SQLite store: newest first, times in the school's zone,
// --since and the filters, --json, terminal-safe output (an e-mail address from an identity provider can carry
// control or bidi characters), and a bad --since or an unknown --template is a usage error (exit 2).
import { userInfo } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditRecord } from '../../src/store/types.ts';
import { rostercal, schoolEnv } from '../support/cli.ts';
import { startWeekSandbox } from '../support/clock.ts';
import { openTestStore, type TestStore } from '../sync/helpers.ts';

let ts: TestStore;
let env: Record<string, string>;

const record = (over: Partial<Omit<AuditRecord, 'id'>>): Omit<AuditRecord, 'id'> => ({
  at: '2026-11-01T00:00:00.000Z',
  action: 'roster',
  actor: 'coach@hillcrest.example.edu',
  schoolId: 'hillcrest',
  teamId: 3004,
  sessionId: 100175,
  template: 'attendance-sheet',
  clientAddress: '192.0.2.7',
  staffSession: 'abcdef012345',
  detail: null,
  ...over,
});

beforeAll(async () => {
  ts = await openTestStore('sqlite');
  // The command reads the store only: the upstream is never contacted.
  env = schoolEnv({ url: 'http://127.0.0.1:9/', token: 'unused-token' }, ts.env);
  await ts.store.records.upsertSchool({
    id: 'hillcrest',
    name: 'Hillcrest College',
    timeZone: 'Australia/Sydney',
  });
  await ts.store.access.appendAudit(
    record({
      at: '2026-10-01T22:15:00.000Z',
      action: 'sign-in',
      template: null,
      teamId: null,
      sessionId: null,
      detail: 'staff',
    }),
  );
  await ts.store.access.appendAudit(
    record({ at: '2026-11-20T05:30:00.000Z', template: 'medical-and-guardian-contacts' }),
  );
  await ts.store.access.appendAudit(
    record({ at: '2026-11-21T01:00:00.000Z', actor: 'admin token', teamId: 3010, template: 'team-roster' }),
  );
  await ts.store.access.appendAudit(
    record({
      at: '2026-11-22T03:00:00.000Z',
      action: 'sign-in-refused',
      actor: 'evil\u001b[2J\u202Eliam@x.example\r\nforged line',
      schoolId: null,
      teamId: null,
      sessionId: null,
      template: null,
      detail: 'unknown',
    }),
  );
});
afterAll(async () => {
  await ts?.cleanup();
});

describe('rostercal audit', () => {
  it('prints every record newest first, in the school’s time zone, terminal-safe', async () => {
    const child = rostercal(['audit'], env);
    expect(await child.exit, child.output()).toBe(0);
    const lines = child.stdout().trimEnd().split('\n');
    expect(lines[0]).toMatch(/^when\s+what\s+who\s+school\s+team\s+session\s+template\s+client\s+detail$/);
    expect(lines).toHaveLength(5);
    // Sydney is UTC+11 in summer (October on), +10 before the first Sunday of October.
    expect(lines[1]).toMatch(/^2026-11-22 14:00:00 \+11:00\s+sign-in-refused\s+evil/);
    expect(lines[2]).toMatch(/^2026-11-21 12:00:00 \+11:00\s+roster\s+admin token\s+hillcrest\s+3010/);
    expect(lines[3]).toMatch(
      /^2026-11-20 16:30:00 \+11:00\s+roster\s+coach@hillcrest\.example\.edu\s+hillcrest\s+3004\s+100175\s+medical-and-guardian-contacts\s+192\.0\.2\.7/,
    );
    expect(lines[4]).toMatch(/^2026-10-02 08:15:00 \+10:00\s+sign-in\s+coach@/);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: looking for control characters is the point.
    expect(child.stdout()).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u202A-\u202E]/);
    expect(child.stdout()).not.toMatch(/^forged line/m);
  });

  it('--since, --person, --template and --json', async () => {
    const since = rostercal(['audit', '--since', '2026-11-20T16:00+11:00'], env);
    expect(await since.exit, since.output()).toBe(0);
    expect(since.stdout().trimEnd().split('\n')).toHaveLength(4);

    const person = rostercal(
      ['audit', '--person', 'COACH@hillcrest.example.edu', '--template', 'medical-and-guardian-contacts'],
      env,
    );
    expect(await person.exit, person.output()).toBe(0);
    expect(person.stdout().trimEnd().split('\n')).toHaveLength(2);

    const json = rostercal(['audit', '--json', '--since', '2026-11-01'], env);
    expect(await json.exit, json.output()).toBe(0);
    const rows = JSON.parse(json.stdout()) as (AuditRecord & { local: string; timeZone: string })[];
    expect(rows.map((r) => r.at)).toEqual([
      '2026-11-22T03:00:00.000Z',
      '2026-11-21T01:00:00.000Z',
      '2026-11-20T05:30:00.000Z',
    ]);
    expect(rows[2]).toMatchObject({
      actor: 'coach@hillcrest.example.edu',
      template: 'medical-and-guardian-contacts',
      local: '2026-11-20 16:30:00 +11:00',
      timeZone: 'Australia/Sydney',
    });

    const none = rostercal(['audit', '--since', '2026-11-23'], env);
    expect(await none.exit).toBe(0);
    expect(none.stdout()).toBe('no audit records since 2026-11-23T00:00:00.000Z\n');
  });

  it('a --since after today is a usage error (exit 2), not "no audit records"', async () => {
    // Found by an outside tester: --since 2099-01-01 printed "no audit records", read as "nobody did anything".
    for (const since of ['2099-01-01', new Date(Date.now() + 3 * 86_400_000).toISOString().slice(0, 10)]) {
      const future = rostercal(['audit', '--since', since], env);
      expect(await future.exit, future.output()).toBe(2);
      expect(future.stderr()).toMatch(/^rostercal audit: --since .* is in the future/m);
      expect(future.stdout()).toBe('');
    }
    const hour = rostercal(['audit', '--since', new Date(Date.now() + 3_600_000).toISOString()], env);
    expect(await hour.exit, hour.output()).toBe(2);
    // Today itself is fine (the school's today may still be tomorrow in UTC).
    const today = rostercal(['audit', '--since', new Date().toISOString().slice(0, 10)], env);
    expect(await today.exit, today.output()).toBe(0);
  });

  it('a bad --since or --school is a usage error (exit 2)', async () => {
    const bad = rostercal(['audit', '--since', 'yesterday'], env);
    expect(await bad.exit).toBe(2);
    expect(bad.output()).toMatch(/rostercal audit: --since must be an ISO date or date-time/);
    const school = rostercal(['audit', '--school', 'nowhere'], env);
    expect(await school.exit).toBe(2);
    expect(school.output()).toMatch(/--school: no school "nowhere" is configured \(hillcrest\)/);
  });

  it('an unknown --template is a usage error naming the valid ones (exit 2); one the log holds still filters', async () => {
    const nope = rostercal(['audit', '--template', 'nope'], env);
    expect(await nope.exit, nope.output()).toBe(2);
    expect(nope.stderr()).toContain(
      'rostercal audit: --template: no roster template "nope" (attendance-sheet, match-day-sheet, medical-and-guardian-contacts, team-roster)',
    );
    expect(nope.stdout()).toBe('');
    // A school's own template removed since: its downloads stay in the log, and the filter still finds them.
    await ts.store.access.appendAudit(record({ at: '2026-11-23T00:00:00.000Z', template: 'old-sheet' }));
    const old = rostercal(['audit', '--template', 'old-sheet'], env);
    expect(await old.exit, old.output()).toBe(0);
    expect(old.stdout().trimEnd().split('\n')).toHaveLength(2);
  });
});

describe('a filter that can match nothing is a usage error, not an empty log', () => {
  it('--person takes an e-mail address, "admin token" or a "who" the log holds (exit 2 otherwise)', async () => {
    const notEmail = rostercal(['audit', '--person', 'notanemail'], env);
    expect(await notEmail.exit, notEmail.output()).toBe(2);
    expect(notEmail.stderr()).toContain(
      'rostercal audit: --person: "notanemail" is not an e-mail address: a person is the e-mail address of a member of staff',
    );
    expect(notEmail.stdout()).toBe('');
    // An address no staff member has and no record names: a typo of the domain.
    const nobody = rostercal(['audit', '--person', 'coach@hilcrest.example.edu'], env);
    expect(await nobody.exit, nobody.output()).toBe(2);
    expect(nobody.stderr()).toContain(
      '--person: no staff member has the e-mail address "coach@hilcrest.example.edu", and no audit record names it',
    );
    for (const who of ['admin token', 'Admin Token', 'COACH@hillcrest.example.edu']) {
      const ok = rostercal(['audit', '--person', who], env);
      expect(await ok.exit, ok.output()).toBe(0);
    }
    // Another actor the log records (a command-line account, a family's link) is a person the log knows.
    await ts.store.access.appendAudit(
      record({ at: '2026-11-24T00:00:00.000Z', actor: 'command line (ops)' }),
    );
    const cli = rostercal(['audit', '--person', 'command line (ops)'], env);
    expect(await cli.exit, cli.output()).toBe(0);
    expect(cli.stdout().trimEnd().split('\n')).toHaveLength(2); // One of those shapes that no record names yet: said so, not "is not an e-mail address … such as" itself.
    const none = rostercal(['audit', '--person', 'command line (root)'], env);
    expect(await none.exit, none.output()).toBe(2);
    expect(none.stderr()).toContain('--person: no audit record names "command line (root)" yet');
    expect(none.stderr()).not.toContain('is not an e-mail address');
  });

  it('--action filters by what happened, refusing one the log does not record (exit 2)', async () => {
    await ts.store.access.appendAudit(
      record({ at: '2026-11-25T00:00:00.000Z', action: 'feed-rotate', actor: 'admin token', template: null }),
    );
    const rotations = rostercal(['audit', '--action', 'feed-rotate', '--json'], env);
    expect(await rotations.exit, rotations.output()).toBe(0);
    const rows = JSON.parse(rotations.stdout()) as AuditRecord[];
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((r) => r.action === 'feed-rotate')).toBe(true);
    const bad = rostercal(['audit', '--action', 'rotate'], env);
    expect(await bad.exit, bad.output()).toBe(2);
    expect(bad.stderr()).toContain(
      'rostercal audit: --action: "rotate" is not an action the audit log records',
    );
    expect(bad.stderr()).toContain('feed-rotate');
    expect(bad.stdout()).toBe('');
  });

  it("a negative --team or --limit is told by the tool's own message (exit 2), not node's", async () => {
    for (const [flag, says] of [
      ['--team', '--team must be a whole number'],
      ['--limit', '--limit must be a whole number'],
    ] as const) {
      const r = rostercal(['audit', flag, '-5'], env);
      expect(await r.exit, r.output()).toBe(2);
      expect(r.stderr()).toContain(`${says}`);
      expect(r.stderr()).toContain('got "-5"');
      expect(r.stderr()).not.toContain('ambiguous');
    }
  });

  it('--team names a team of the school or one the log holds; --since a real date', async () => {
    const team = rostercal(['audit', '--team', '99999'], env);
    expect(await team.exit, team.output()).toBe(2);
    expect(team.stderr()).toContain(
      "--team: no team has the id 99999, and no audit record names it (rostercal feeds list shows each team's id",
    );
    // A team no longer listed whose records the log keeps still filters.
    const gone = rostercal(['audit', '--team', '3010'], env);
    expect(await gone.exit, gone.output()).toBe(0);
    expect(gone.stdout()).toMatch(/admin token\s+hillcrest\s+3010/);
    for (const day of ['2026-02-30', '2026-04-31T08:00Z']) {
      const since = rostercal(['audit', '--since', day], env);
      expect(await since.exit, since.output()).toBe(2);
      expect(since.stderr()).toContain(`--since is not a real date: "${day}"`);
    }
  });
});

describe('what is done at the command line is audited too', () => {
  it('rostercal roster and rostercal feeds rotate write records naming the account that ran them', async () => {
    const sandbox = await startWeekSandbox({ seed: 4, scale: 'small' });
    const pulled = await openTestStore('sqlite');
    try {
      const cliEnv = schoolEnv(sandbox, pulled.env);
      const sync = rostercal(['sync', '--full'], cliEnv);
      expect(await sync.exit, sync.output()).toBe(0);
      const team = (await pulled.store.records.list('hillcrest', 'teams'))[0]!;
      const file = path.join(pulled.env.DATA_DIR!, 'roster.pdf');
      const roster = rostercal(
        ['roster', '--team', String(team.id), '--template', 'team-roster', '-o', file],
        cliEnv,
      );
      expect(await roster.exit, roster.output()).toBe(0);
      const rotate = rostercal(['feeds', 'rotate', 'team', String(team.id)], cliEnv);
      expect(await rotate.exit, rotate.output()).toBe(0);

      const audit = rostercal(['audit', '--json'], cliEnv);
      expect(await audit.exit, audit.output()).toBe(0);
      const rows = JSON.parse(audit.stdout()) as AuditRecord[];
      const actor = `command line (${userInfo().username})`;
      expect(rows).toHaveLength(2);
      expect(rows[0]).toMatchObject({ action: 'feed-rotate', actor, schoolId: 'hillcrest', teamId: team.id });
      expect(rows[1]).toMatchObject({ action: 'roster', actor, teamId: team.id, template: 'team-roster' });
    } finally {
      await pulled.cleanup();
      await sandbox.close();
    }
    // A pull and three CLI children: 18 s on a quiet machine, past vitest's 60 s at a load of ~28.
  }, 180_000);
});
