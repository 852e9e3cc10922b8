// /feeds/<token> and /feeds/<token>.ics (web/feeds-router.ts) over HTTP, the whole app on a real SQLite store a
// pull from the sandbox filled: a child's page and calendar carry what is coming and nothing a family may not see
// (no teammate's name, no internal notes, no medical or guardian data); a client's mistake (a token that is not one,
// a reminder not offered, an event file that is not one) is a 4xx, never a 500.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SStudent } from '../../src/sandbox/model.ts';
import type { RunningServer } from '../../src/web/server.ts';
import { type Harness, startHarness } from '../feeds/harness.ts';

let h: Harness;
let server: RunningServer;
let child: SStudent;
let token: string;
/** What the child's family must never read: teammates' names, internal notes, the child's medical and contacts. */
let forbidden: string[];

beforeAll(async () => {
  h = await startHarness({ seed: 23 });
  server = await h.serve();
  const s = h.sandbox.school;
  const now = Date.parse(String(h.sandbox.now()));
  const upcoming = s.sessions.filter((x) => x.start > now && !x.cancelled && x.teamIds.length > 0);
  const session = upcoming.find((x) => x.rosterIds.length > 3)!;
  child = s.students.find((st) => st.id === session.rosterIds[0])!;
  token = (await h.tokens.ensure('hill', 'student', child.id)).token!;
  const own = `${child.firstName} ${child.lastName}`;
  const teammates = s.students.filter(
    (st) =>
      st.id !== child.id && session.rosterIds.includes(st.id) && `${st.firstName} ${st.lastName}` !== own,
  );
  const parentNotes = new Set(s.sessions.map((x) => x.studentParentNotes));
  forbidden = [
    ...teammates.map((st) => `${st.firstName} ${st.lastName}`),
    ...s.sessions.map((x) => x.notes).filter((n) => n.length > 12 && !parentNotes.has(n)),
    ...child.medicalConditions.map((m) => m.name),
    ...child.guardians.map((g) => g.mobileNumber),
  ];
  expect(teammates.length).toBeGreaterThan(2);
}, 120_000);
afterAll(async () => {
  await h?.close();
});

function expectNothingForbidden(text: string) {
  const leaked = forbidden.filter((f) => text.includes(f));
  expect(leaked).toEqual([]);
}

describe("a child's feed", () => {
  it('the page: 200 HTML, never shared-cached, what is coming, nothing a family may not see', async () => {
    const res = await fetch(`${server.url}/feeds/${token}`, { headers: { accept: 'text/html' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('private, no-cache');
    const page = await res.text();
    expect(page).toContain(`https://cal.example.org/feeds/${token}.ics`);
    expect(page).toMatch(/<h1[^>]*>/);
    expectNothingForbidden(page);
  });

  it('the calendar: 200 text/calendar with events, nothing a family may not see', async () => {
    const res = await fetch(`${server.url}/feeds/${token}.ics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/calendar; charset=utf-8');
    const ics = await res.text();
    expect(ics.match(/BEGIN:VEVENT/g)!.length).toBeGreaterThan(3);
    // Folded lines joined, as a calendar reads them.
    expectNothingForbidden(ics.replace(/\r\n[ \t]/g, ''));
  });

  it('a reminder not offered is 400 saying which are; an offered one gives the calendar with alarms', async () => {
    const bad = await fetch(`${server.url}/feeds/${token}.ics?reminder=tomorrow-ish`);
    expect(bad.status).toBe(400);
    const page = await fetch(`${server.url}/feeds/${token}?reminder=nope`, {
      headers: { accept: 'text/html' },
    });
    expect(page.status).toBe(400);
    expect(await page.text()).toContain('This reminder is not offered');
    const ok = await fetch(`${server.url}/feeds/${token}.ics?reminder=1h`);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('BEGIN:VALARM');
  });

  it('a token that is not one, one never issued, or an event file that is not one: 404, never 500', async () => {
    for (const path of [
      '/feeds/short',
      `/feeds/${'A'.repeat(32)}.ics`,
      `/feeds/${'A'.repeat(32)}`,
      `/feeds/${token}.pdf`,
      `/feeds/${token}/events/nothing.ics`,
      `/feeds/${token}/events/999999999.ics`,
    ]) {
      const res = await fetch(`${server.url}${path}`);
      expect(res.status, path).toBe(404);
    }
  });
});
