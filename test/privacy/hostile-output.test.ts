// Every `rostercal` command, as a child process, against an upstream whose names hold terminal attacks: CR/LF to
// forge lines (one forging an iCalendar event), ESC sequences (colour, clear screen), C1 controls (NEL, CSI),
// bidi overrides and isolates, line separators. Nothing a command prints (stdout or stderr, logs included) holds
// a raw control or bidi character or a forged line; JSON output carries the text intact, escaped by JSON.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { startFakeGraph } from '../fakes/graph.ts';
import { type Child, rostercal, schoolEnv } from '../support/cli.ts';
import { startWeekSandbox } from '../support/clock.ts';

/** What an upstream name may hold: each part once reached an operator's terminal raw. */
const ATTACK =
  '\r\nFORGED LINE \u001b[31mRED\u001b[0m\u001b[2J\u001b]0;title\u0007 \u202Eevil\u202C \u2066iso\u2069 \u0085NEL\u009b31mCSI \u2028LS\u2029PS\u200F\u061C\r\nBEGIN:VEVENT\r\nUID:evil\nEND:VEVENT';
const hostile = (name: string) => `${name}${ATTACK}`;

/** Raw control characters other than LF (and tab), and bidi controls / line separators. */
const RAW =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: looking for control characters is the point.
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/u;
const FORGED = /^\s*(FORGED LINE|BEGIN:VEVENT|UID:evil|END:VEVENT)/m;

let sandbox: Sandbox;
let dataDir: string;
let env: Record<string, string>;
let teamId: number;
let sessionId: number;
let otherSessionId: number;

beforeAll(async () => {
  sandbox = await startWeekSandbox({ seed: 23, scale: 'small' });
  const s = sandbox.school;
  const now = Date.parse(sandbox.now());
  // A visible team with a coming session (from tomorrow: in a holiday the next one may be weeks away) that has
  // a location.
  const session = s.sessions.find(
    (x) =>
      x.start > now + 86_400_000 &&
      x.locationId !== null &&
      x.teamIds.length === 1 &&
      !x.cancelled &&
      !s.teams.find((t) => t.id === x.teamIds[0])!.hidden,
  )!;
  const team = s.teams.find((t) => t.id === session.teamIds[0])!;
  teamId = team.id;
  sessionId = session.id;
  otherSessionId = s.sessions.find((x) => !x.teamIds.includes(teamId) && x.start > now)!.id;
  team.name = hostile('Open Netball');
  session.title = hostile('Round 1');
  session.studentParentNotes = hostile('Bring water');
  s.activities.find((a) => a.id === team.activityId)!.name = hostile('Netball');
  s.locations.find((l) => l.id === session.locationId)!.name = hostile('Court 3');
  const member = s.memberships.find((m) => m.teamId === teamId)!;
  const student = s.students.find((x) => x.id === member.studentId)!;
  student.firstName = hostile('Ava');
  student.lastName = hostile('Nguyen');
  const coach = s.users.find((u) => u.id === team.staff[0]?.userId) ?? s.users[0]!;
  coach.lastName = hostile('Coach');
  dataDir = await mkdtemp(path.join(tmpdir(), 'rostercal-hostile-'));
  env = { ...schoolEnv(sandbox, { DATA_DIR: dataDir }), LOG_LEVEL: 'info' };
}, 60_000);
afterAll(async () => {
  await sandbox?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

async function ran(args: string[], expectedExit = 0): Promise<Child> {
  const child = rostercal(args, env);
  expect(await child.exit, `rostercal ${args.join(' ')}:\n${child.output()}`).toBe(expectedExit);
  return child;
}

function expectSafe(what: string, text: string): void {
  const raw = RAW.exec(text);
  expect(
    raw,
    `${what}: raw U+${raw?.[0].codePointAt(0)?.toString(16).padStart(4, '0')} in\n${JSON.stringify(text.slice(Math.max(0, (raw?.index ?? 0) - 80), (raw?.index ?? 0) + 40))}`,
  ).toBeNull();
  expect(FORGED.exec(text)?.[0] ?? null, `${what}: a forged line`).toBeNull();
}

describe('every command prints upstream text through the terminal-safe path', () => {
  it('sync (progress, summary, log lines) and sync --json', async () => {
    const sync = await ran(['sync', '--full']);
    expectSafe('sync --full', sync.output());
    const json = await ran(['sync', '--json']);
    expectSafe('sync --json', json.output());
    JSON.parse(json.stdout());
  }, 120_000);

  it('sessions: the team and titles on their own lines, cleaned; --json keeps them intact', async () => {
    const text = await ran(['sessions', '--team', String(teamId)]);
    expectSafe('sessions', text.output());
    expect(text.stdout()).toMatch(/Open Netball .*FORGED LINE .*RED.*evil/);
    expect(text.stdout()).toMatch(/Round 1 .*BEGIN:VEVENT .*UID:evil/);
    const json = await ran(['sessions', '--team', String(teamId), '--json']);
    expectSafe('sessions --json', json.output());
    const parsed = JSON.parse(json.stdout()) as { team: { name: string }; sessions: { title: string }[] };
    expect(parsed.team.name).toBe(hostile('Open Netball'));
    // Titles come from the projection, which cleans what it makes (calendar/); the team's name is the store's.
    expect(parsed.sessions.some((x) => /Round 1.*BEGIN:VEVENT/s.test(x.title))).toBe(true);
  }, 60_000);

  it('feeds list, feeds list --json, feeds rotate (text and --json)', async () => {
    const list = await ran(['feeds', 'list']);
    expectSafe('feeds list', list.output());
    const json = await ran(['feeds', 'list', '--json']);
    expectSafe('feeds list --json', json.output());
    const rows = JSON.parse(json.stdout()) as { scope: string; id: number; name: string }[];
    expect(rows.find((r) => r.scope === 'team' && r.id === teamId)?.name).toContain(ATTACK);
    expectSafe('feeds rotate', (await ran(['feeds', 'rotate', 'team', String(teamId)])).output());
    const rotated = await ran(['feeds', 'rotate', 'team', String(teamId), '--json']);
    expectSafe('feeds rotate --json', rotated.output());
    expect((JSON.parse(rotated.stdout()) as { name: string }).name).toContain(ATTACK);
  }, 60_000);

  it('roster: one team, a session sheet, --all, --templates, and a refusal naming a session', async () => {
    const out = path.join(dataDir, 'out');
    expectSafe('roster', (await ran(['roster', '--team', String(teamId), '-o', `${out}-team.pdf`])).output());
    expectSafe(
      'roster --session',
      (
        await ran([
          'roster',
          '--team',
          String(teamId),
          '--session',
          String(sessionId),
          '--template',
          'attendance-sheet',
          '-o',
          `${out}-sheet.pdf`,
        ])
      ).output(),
    );
    expectSafe('roster --all', (await ran(['roster', '--all', '-o', `${out}-all`])).output());
    expectSafe('roster --templates', (await ran(['roster', '--templates'])).output());
    const refused = rostercal(
      ['roster', '--team', String(teamId), '--session', String(otherSessionId), '-o', `${out}-x.pdf`],
      env,
    );
    // The documented failure code (1: the command ran and was refused), not any crash.
    expect(await refused.exit, refused.output()).toBe(1);
    expect(refused.output()).toMatch(/has no session/);
    expectSafe('roster refused', refused.output());
  }, 120_000);

  it('status, status --json, audit, audit --json, migrate', async () => {
    for (const args of [['status'], ['status', '--json'], ['audit'], ['audit', '--json'], ['migrate']])
      expectSafe(args.join(' '), (await ran(args)).output());
  }, 60_000);

  it('sync --dry-run: the push plan names calendars (staff names) and session titles', async () => {
    const fake = await startFakeGraph();
    try {
      const config = path.join(dataDir, 'push.json');
      await writeFile(
        config,
        JSON.stringify({
          dataDir,
          publicUrl: env.PUBLIC_URL,
          schools: [
            {
              id: env.SCHOOL_ID,
              name: env.SCHOOL_NAME,
              upstream: { url: sandbox.url, token: 'env:UPSTREAM_TOKEN' },
              timeZone: env.SCHOOL_TZ,
              targets: [
                {
                  id: 'staff',
                  provider: 'outlook',
                  scope: 'staff',
                  outlook: { baseUrl: fake.url, accessToken: 'env:GRAPH_TOKEN' },
                },
              ],
            },
          ],
        }),
      );
      const child = rostercal(['sync', '--dry-run'], {
        ROSTERCAL_CONFIG: config,
        UPSTREAM_TOKEN: sandbox.token,
        GRAPH_TOKEN: fake.token,
        NODE_EXTRA_CA_CERTS: fake.caFile,
        LOG_LEVEL: 'info',
        UPSTREAM_URL: undefined,
        SCHOOL_ID: undefined,
        SCHOOL_NAME: undefined,
        SCHOOL_TZ: undefined,
      });
      expect(await child.exit, child.output()).toBe(0);
      expect(child.stdout()).toMatch(/plan \S+\/staff \(outlook\)/);
      expect(child.stdout()).toMatch(/\+ session \d+ .*Round 1 .*FORGED LINE .*BEGIN:VEVENT/);
      expectSafe('sync --dry-run', child.output());
    } finally {
      await fake.close();
    }
  }, 120_000);

  it('sandbox (its own generated school: printed through the same path), and usage errors', async () => {
    // The command as an operator runs it, on its default clock (the present): only what it prints is judged.
    const child = rostercal(['sandbox', '--port', '0'], env);
    try {
      await child.waitFor(/sandbox listening on/, 60_000);
    } finally {
      child.proc.kill('SIGTERM');
      await child.exit;
    }
    expectSafe('sandbox', child.output());
    // An unknown team id quoted back, and an unknown option: our own messages around the operator's text.
    const badTeam = rostercal(['sessions', '--team', '\u001b[2J1'], env);
    expect(await badTeam.exit).toBe(2);
    expect(badTeam.output()).toMatch(/--team must be a whole number/);
    expectSafe('sessions --team', badTeam.output());
    const usage = rostercal(['feeds', '--bogus\r\nFORGED LINE'], env);
    expect(await usage.exit).toBe(2);
    expect(usage.output()).toMatch(/Unknown option/);
    expectSafe('feeds --bogus', usage.output());
  }, 60_000);

  it('serve: the banner and its log lines', async () => {
    const child = rostercal(['serve', '--port', '0'], env);
    try {
      await child.waitFor(/Stop with Ctrl-C/, 90_000);
    } finally {
      child.proc.kill('SIGTERM');
      await child.exit;
    }
    expectSafe('serve', child.output());
  }, 120_000);
});
