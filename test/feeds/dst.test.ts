// Sessions in the hour daylight saving repeats (both occurrences) and right after the hour it skips, written
// through the sandbox's own write endpoint and pulled like any other: every output says the right instant. The ICS
// writes the ambiguous ones in UTC form (RFC 5545: a local time in the repeated hour is ambiguous); the landing
// page and the attendance sheet show the school's wall time, and tell the two 02:30s apart.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateRoster } from '../../src/rosters/index.ts';
import { TEST_NOW } from '../support/clock.ts';
import { containsText, pdfText } from '../support/pdf.ts';
import { type Harness, startHarness } from './harness.ts';
import { parseBoth } from './parse.ts';

const SCHOOL = 'hill';
// Australia/Sydney: summer time ends 2027-04-04 03:00 AEDT (clocks back to 02:00 AEST), starts 2027-10-03 02:00
// AEST (clocks on to 03:00 AEDT).
const FIRST_0230 = '2027-04-03T15:30:00.000Z'; // 02:30 AEDT (+11)
const SECOND_0230 = '2027-04-03T16:30:00.000Z'; // 02:30 AEST (+10), an hour later
const AFTER_GAP = '2027-10-02T16:00:00.000Z'; // 03:00 AEDT, the first minute after the skipped hour
const HOUR = 3_600_000;
const plus = (iso: string, ms: number) => new Date(Date.parse(iso) + ms).toISOString();

let h: Harness;
let teamId: number;
const ids = new Map<string, number>();

beforeAll(async () => {
  h = await startHarness();
  const team = h.sandbox.school.teams.find((t) => !t.hidden)!;
  teamId = team.id;
  const admin = h.sandbox.school.users.find((u) => u.isAdmin && !u.frozen)!;
  for (const [title, start] of [
    ['DST first 02:30', FIRST_0230],
    ['DST second 02:30', SECOND_0230],
    ['DST after the gap', AFTER_GAP],
  ] as const) {
    const [created] = await h.client.createSessions({
      email: admin.email,
      sessions: [
        {
          title,
          activityId: team.activityId,
          startDateTime: start,
          endDateTime: plus(start, HOUR / 2),
          teamIds: [teamId],
        },
      ],
    });
    ids.set(title, created!.id);
  }
  await h.pull('incremental');
});
afterAll(async () => h?.close());

/** The VEVENT of the session titled `title` (the feed prefixes the team's name). */
function vevent(ics: string, title: string): string {
  const i = ics.search(new RegExp(`SUMMARY:[^\\r\\n]*${title}`));
  expect(i, title).toBeGreaterThan(-1);
  return ics.slice(ics.lastIndexOf('BEGIN:VEVENT', i), ics.indexOf('END:VEVENT', i));
}

const text = (html: string) =>
  html
    .replace(/<[^>]+>/g, ' ')
    .replace(/&#(\d+);/g, (_, c: string) => String.fromCharCode(Number(c)))
    .replace(/\s+/g, ' ');

describe('sessions in the repeated and the skipped hour, end to end', () => {
  it('are stored at the instants written', async () => {
    const stored = await h.store.records.listSessions(SCHOOL, { teamIds: [teamId] });
    const start = (t: string) => stored.find((s) => s.id === ids.get(t))?.start;
    expect(start('DST first 02:30')).toBe(FIRST_0230);
    expect(start('DST second 02:30')).toBe(SECOND_0230);
    expect(start('DST after the gap')).toBe(AFTER_GAP);
  });

  it('ICS: the repeated hour in UTC form, every instant right for ical.js, node-ical and the strict reader', async () => {
    const ics = (await h.feeds.get(SCHOOL, 'team', teamId))!.body.toString('utf8');
    expect(vevent(ics, 'DST first 02:30')).toMatch(/\r\nDTSTART:20270403T153000Z\r\n/);
    expect(vevent(ics, 'DST second 02:30')).toMatch(/\r\nDTSTART:20270403T163000Z\r\n/);
    // Right after the gap a local time is unambiguous: either form, as long as it names the instant.
    expect(vevent(ics, 'DST after the gap')).toMatch(
      /\r\nDTSTART(:20271002T160000Z|;TZID=Australia\/Sydney:20271003T030000)\r\n/,
    );
    const parsed = parseBoth(ics).events;
    const at = (t: string) => parsed.find((e) => e.summary.endsWith(t));
    expect(new Date(at('DST first 02:30')!.start).toISOString()).toBe(FIRST_0230);
    expect(new Date(at('DST second 02:30')!.start).toISOString()).toBe(SECOND_0230);
    expect(new Date(at('DST after the gap')!.start).toISOString()).toBe(AFTER_GAP);
    expect(new Date(at('DST first 02:30')!.end).toISOString()).toBe(plus(FIRST_0230, HOUR / 2));
  });

  it('landing page: the two 02:30s told apart by their zone, the one after the gap at 03:00', async () => {
    const server = await h.serve();
    const issued = await h.tokens.ensure(SCHOOL, 'team', teamId);
    const page = async (now: string) => {
      h.sandbox.setNow(now);
      return text(await (await fetch(`${server.url}/feeds/${issued.token}`)).text());
    };
    try {
      const april = await page('2027-04-03T09:00:00.000Z');
      // Not "02:30–02:00": the first ends at 02:00 after the clocks went back.
      expect(april).toContain('02:30 AEDT\u201302:00 AEST');
      expect(april).toContain('02:30 AEST\u201303:00 AEST');
      expect(april).not.toMatch(/\b02:30\u201302:00\b/);
      const october = await page('2027-10-02T09:00:00.000Z');
      expect(october).toMatch(/\b03:00\u201303:30\b[\s\S]*DST after the gap/);
    } finally {
      h.sandbox.setNow(TEST_NOW);
    }
  });

  it('attendance sheet (PDF): the same times, read back from the PDF', async () => {
    const want: [string, string][] = [
      ['DST first 02:30', '02:30 AEDT\u201302:00 AEST'],
      ['DST second 02:30', '02:30 AEST\u201303:00 AEST'],
      ['DST after the gap', '03:00\u201303:30'],
    ];
    for (const [t, time] of want) {
      const roster = await generateRoster(h.store, {
        schoolId: SCHOOL,
        teamId,
        sessionId: ids.get(t)!,
        template: 'attendance-sheet',
      });
      const pdf = await pdfText(roster.pdf);
      expect(containsText(pdf, time), `${t}: ${pdf.slice(0, 300)}`).toBe(true);
    }
  });
});
