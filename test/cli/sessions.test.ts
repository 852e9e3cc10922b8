// `rostercal sessions --team ID` as a child process, on the SQLite store a real `rostercal sync` filled from the
// sandbox over HTTP: a team's sessions that have not ended, in school time, the next one marked (what an attendance
// sheet prints by default), --json with the same rows, and errors that name the option or the unknown team.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectNoSecrets, runRostercal } from '../support/cli.ts';
import { type PulledSchool, schoolPulledByCli } from '../support/pulled-school.ts';

let school: PulledSchool;
let team: { id: number; name: string };

interface Row {
  id: number;
  start: string;
  end: string;
  status: string;
  next: boolean;
}

beforeAll(async () => {
  school = await schoolPulledByCli({ seed: 13, dirPrefix: 'rostercal-sessions-' });
  team = school.sandbox.school.teams.find((t) => !t.hidden)!;
}, 120_000);
afterAll(async () => {
  await school?.close();
});

describe('rostercal sessions', () => {
  it("--json: the team's sessions not ended within --days, the upstream's own, one of them next", async () => {
    const r = await runRostercal(
      ['sessions', '--team', String(team.id), '--json', '--days', '14'],
      school.env,
    );
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { school: string; team: { id: number }; sessions: Row[] };
    expect(out.school).toBe('hillcrest');
    expect(out.team.id).toBe(team.id);
    const now = Date.now();
    const upstream = school.sandbox.school.sessions.filter(
      (s) => s.teamIds.includes(team.id) && s.end > now && s.start < now + 14 * 86_400_000,
    );
    expect(out.sessions.length).toBeGreaterThan(0);
    expect(out.sessions.map((s) => s.id).sort()).toEqual(upstream.map((s) => s.id).sort());
    const next = out.sessions.filter((s) => s.next);
    expect(next).toHaveLength(1);
    expect(next[0]!.status).not.toBe('cancelled');
  });

  it('prints a header naming the team and one line a session, the next one marked, in school time', async () => {
    const r = await runRostercal(['sessions', '--team', String(team.id), '--days', '14'], school.env);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(
      new RegExp(
        `^${team.name} \\(team ${team.id}\\): \\d+ sessions? in the next 14 days \\(Australia/Sydney\\)$`,
      ),
    );
    expect(lines[1]).toMatch(/^ID\s+DATE\s+TIME\s+STATUS\s+TITLE$/);
    const rows = lines.slice(2);
    // The next session not cancelled is the one marked; a cancelled one before it is not.
    const marked = rows.findIndex((l) => /\snext\s/.test(l));
    expect(rows.filter((l) => /\snext\s/.test(l))).toHaveLength(1);
    expect(rows.slice(0, marked).every((l) => /\sCANCELLED\s/.test(l))).toBe(true);
    expect(rows[marked]).toMatch(
      /^\d+\s+\w{3}, \d\d \w{3} \d{4}\s+\d\d:\d\d–\d\d:\d\d AE[DS]T\s+(?!CANCELLED)/,
    );
    expectNoSecrets(r.stdout, school.sandbox.token);
  });

  it('an unknown team exits 1 naming it; no --team or a bad --days exits 2 naming the option', async () => {
    const unknown = await runRostercal(['sessions', '--team', '987654'], school.env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('unknown team 987654 in school "hillcrest"');
    const none = await runRostercal(['sessions'], school.env);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('say which team: --team ID');
    const days = await runRostercal(['sessions', '--team', String(team.id), '--days', '0'], school.env);
    expect(days.code).toBe(2);
    expect(days.stderr).toContain('--days must be a whole number');
    // A negative number is the option's value, told by the tool, not node's "argument is ambiguous".
    const negative = await runRostercal(['sessions', '--team', String(team.id), '--days', '-1'], school.env);
    expect(negative.code).toBe(2);
    expect(negative.stderr).toContain('--days must be a whole number from 1 to 3660, got "-1"');
    expect(negative.stderr).not.toContain('ambiguous');
  });
});
