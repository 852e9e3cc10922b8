// Another child's name planted upstream, in every way teachers write it, read back the way families meet it:
// team, activity and student feeds over HTTP and the feed's landing page (sandbox → pull → store → web).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { foldWord } from '../../src/calendar/other-children-filter.ts';
import type { Stored } from '../../src/store/types.ts';
import { type Harness, startHarness } from './harness.ts';

let h: Harness;
let base: string;
let team: Stored<'teams'>;
let child: Stored<'students'>;
let sibling: Stored<'students'>;
let note: string;
let location: string;

const SCHOOL = 'hill';
const strip = (s: string) => s.normalize('NFD').replace(/\p{M}/gu, '').replace(/ø/g, 'o');

/** ICS text as a person reads it: lines unfolded, escapes undone. */
function readable(ics: string): string {
  return ics
    .replace(/\r\n[ \t]/g, '')
    .replace(/\\n/gi, '\n')
    .replace(/\\([,;\\])/g, '$1');
}

/** Whether the text still carries the child's family name in any spelling (folded word by word). */
function namesChild(text: string): boolean {
  const family = foldWord(child.lastName.split(/\s+/)[0]!);
  const words = (text.normalize('NFC').match(/[\p{L}\p{M}\p{N}\u00AD\u200B-\u200D'’-]+/gu) ?? []).map(
    foldWord,
  );
  return words.includes(family) || text.includes(child.lastName);
}

async function get(path: string): Promise<string> {
  const res = await fetch(`${base}${path}`);
  expect(res.status, path).toBe(200);
  return readable(await res.text());
}

beforeAll(async () => {
  h = await startHarness();
  const teams = await h.store.records.list(SCHOOL, 'teams');
  const students = new Map((await h.store.records.list(SCHOOL, 'students')).map((s) => [s.id, s]));
  // A team with two members: the child whose name is planted, and a teammate whose own feed must not show it.
  // Prefer a child whose name has diacritics and a legal name, the hardest spellings.
  const candidates = teams.flatMap((t) =>
    t.students
      .map((m) => ({ t, s: students.get(m.studentId)! }))
      .filter((x) => x.s && x.t.students.length > 1),
  );
  const hard = (s: Stored<'students'>) =>
    Number(/[^ -~]/.test(s.lastName)) + Number(!!s.legalFirstName && s.legalFirstName !== s.firstName);
  const pick = candidates.sort((a, b) => hard(b.s) - hard(a.s) || a.s.id - b.s.id)[0]!;
  team = pick.t;
  child = pick.s;
  sibling = students.get(team.students.find((m) => m.studentId !== child.id)!.studentId)!;
  const legal = child.legalFirstName ?? child.firstName;
  const soft = `${child.lastName.slice(0, 2)}\u00AD${child.lastName.slice(2)}`;
  note = [
    `${child.firstName} ${child.lastName}'s mum drives`,
    `${child.lastName.toUpperCase()}, ${legal} brings the oranges`,
    `Lift: ${child.firstName} ${soft}`,
    `${strip(child.firstName)} ${strip(child.lastName)} in goal`,
    `${`${legal} ${child.lastName}`.normalize('NFD')} is captain`,
    `${child.firstName}\u200B${child.lastName}`,
  ].join('\n');
  location = `${child.firstName} ${child.lastName}'s house, 12 Smith St`;

  const coach = h.sandbox.school.users.find((u) => !u.frozen)!;
  const nowMs = Date.parse(h.sandbox.now());
  const future = (
    await h.store.records.listSessions(SCHOOL, { teamIds: [team.id], from: h.sandbox.now() })
  ).find((s) => !s.cancelled && s.status !== 'draft' && Date.parse(s.start) > nowMs + 86_400_000)!;
  await h.client.updateSessions({
    email: coach.email,
    sessions: [{ id: future.id, studentParentNotes: note }],
  });
  await h.client.createSessions({
    email: coach.email,
    sessions: [
      {
        title: 'Extra rehearsal',
        activityId: team.activity.id,
        startDateTime: new Date(nowMs + 2 * 86_400_000).toISOString(),
        endDateTime: new Date(nowMs + 2 * 86_400_000 + 3_600_000).toISOString(),
        teamIds: [team.id],
        locationName: location,
        studentParentNotes: `Music room with ${child.lastName}, ${child.firstName}`,
      },
      // No team: the session's own title is the event's title (in the activity feed and each student's).
      {
        title: `${child.firstName} ${child.lastName}'s lift`,
        activityId: team.activity.id,
        startDateTime: new Date(nowMs + 3 * 86_400_000).toISOString(),
        endDateTime: new Date(nowMs + 3 * 86_400_000 + 3_600_000).toISOString(),
        studentIds: [child.id, sibling.id],
      },
    ],
  });
  await h.pull('incremental');
  const server = await h.serve();
  base = server.url;
});
afterAll(async () => {
  await h?.close();
});

describe('another child’s name never reaches a family', () => {
  it('is scrubbed from the team feed, the activity feed and a teammate’s feed, title, notes and location', async () => {
    const urls = {
      team: (await h.tokens.ensure(SCHOOL, 'team', team.id)).token!,
      activity: (await h.tokens.ensure(SCHOOL, 'activity', team.activity.id)).token!,
      teammate: (await h.tokens.ensure(SCHOOL, 'student', sibling.id)).token!,
    };
    for (const [what, token] of Object.entries(urls)) {
      const ics = await get(`/feeds/${token}.ics`);
      expect(namesChild(ics), `${what} feed:\n${ics.slice(0, 3000)}`).toBe(false);
      expect(ics, what).toContain('(a student) mum drives'.replace(' mum', "'s mum"));
      if (what !== 'team') expect(ics, what).toContain("SUMMARY:(a student)'s lift");
      expect(ics, what).toContain('LOCATION:Location withheld (ask the coach)');
      expect(ics, what).not.toContain('Smith St');
      const page = await get(`/feeds/${token}`);
      expect(namesChild(page), `${what} page`).toBe(false);
    }
  });

  it('stays in the child’s own feed', async () => {
    const own = (await h.tokens.ensure(SCHOOL, 'student', child.id)).token!;
    const ics = await get(`/feeds/${own}.ics`);
    expect(ics).toContain(`${child.firstName} ${child.lastName}'s mum drives`);
    expect(ics).toContain(`LOCATION:${location}`);
    expect(ics).toContain(`SUMMARY:${child.firstName} ${child.lastName}'s lift`);
  });

  it('staff feeds keep the text as written', async () => {
    const staffId = team.staff[0]!.id;
    const ics = await get(`/feeds/${(await h.tokens.ensure(SCHOOL, 'staff', staffId)).token}.ics`);
    expect(ics).toContain(`${child.firstName} ${child.lastName}'s mum drives`);
  });
});
