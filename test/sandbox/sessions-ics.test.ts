// `GET /sessions?format=ics` (src/sandbox/sessions-ics.ts, the sandbox's hand-written RFC 5545 calendar) over HTTP:
// the window, paging and filters, and each event saying what the school's record says, read by three parsers
// (ical.js, node-ical and the suite's strict RFC 5545 reader, which refuses a line over 75 octets or a bad escape).
import ICAL from 'ical.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import { parseAll } from '../feeds/parse.ts';
import { call } from './helpers.ts';

const NOW = '2026-03-02T01:00:00.000Z';
let sb: Sandbox;

beforeAll(async () => {
  sb = await startSandbox({ seed: 4, now: NOW, scale: 'school' });
});
afterAll(async () => {
  await sb.close();
});

function events(text: string) {
  const cal = new ICAL.Component(ICAL.parse(text));
  return cal.getAllSubcomponents('vevent').map((e) => new ICAL.Event(e));
}

describe('GET /sessions?format=ics', () => {
  it('is a text/calendar attachment cal.ics, fixed range one month back to three ahead, 200 per page', async () => {
    const r = await call(
      sb,
      'GET',
      '/sessions?format=ics&startDateTime=2020-01-01T00:00:00Z&endDateTime=2030-01-01T00:00:00Z',
    );
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/calendar/);
    expect(r.headers.get('content-disposition')).toBe('attachment; filename="cal.ics"');
    const evs = events(r.text);
    expect(evs).toHaveLength(200);
    const from = Date.UTC(2026, 1, 2, 1);
    const to = Date.UTC(2026, 5, 2, 1);
    const inWindow = sb.school.sessions.filter((s) => s.start < to && s.end > from);
    expect(evs.map((e) => e.uid)).toEqual(
      inWindow.slice(0, 200).map((s) => `session-${s.id}@sandbox.extracurricular.invalid`),
    );
    const page2 = events((await call(sb, 'GET', '/sessions?format=iCalendar&page=2')).text);
    expect(page2[0]!.uid).toBe(`session-${inWindow[200]!.id}@sandbox.extracurricular.invalid`);
  });

  it('filters apply; custom fields fold into the description unless includeCustomFieldsMetadata=false', async () => {
    const team = sb.school.teams[0]!;
    const withFields = events((await call(sb, 'GET', `/sessions?format=ics&teamId=${team.id}`)).text);
    expect(withFields.length).toBeGreaterThan(0);
    const ids = new Set(
      sb.school.sessions
        .filter((s) => s.teamIds.includes(team.id))
        .map((s) => `session-${s.id}@sandbox.extracurricular.invalid`),
    );
    expect(withFields.every((e) => ids.has(e.uid))).toBe(true);
    expect(withFields.some((e) => (e.description ?? '').includes('Meet time:'))).toBe(true);
    const without = events(
      (await call(sb, 'GET', `/sessions?format=ics&teamId=${team.id}&includeCustomFieldsMetadata=false`))
        .text,
    );
    expect(without.some((e) => (e.description ?? '').includes('Meet time:'))).toBe(false);
  });

  it('says in each event what the record says: title, times, status, notes, place, escaped and folded', async () => {
    const st = sb.school;
    const [from, to] = [Date.UTC(2026, 1, 2, 1), Date.UTC(2026, 5, 2, 1)];
    const shown = st.sessions.filter((s) => s.start < to && s.end > from).slice(0, 200);
    // Text that needs escaping and folding, in a title and a venue's name.
    const s0 = shown.find((s) => s.locationId !== null)!;
    s0.title = `${'決勝戦'.repeat(30)} Finals; semi, "A" \\ B`;
    s0.studentParentNotes = 'Bring water.\nPick-up at 5, gate B; thanks';
    const venue = st.locations.find((l) => l.id === s0.locationId)!;
    venue.name = 'Oval, north; end';
    const r = await call(sb, 'GET', '/sessions?format=ics&includeCustomFieldsMetadata=false');
    expect(r.text.split('\r\n').every((line) => Buffer.byteLength(line) <= 75)).toBe(true);
    expect(r.text.replace(/\r\n /g, '')).toContain('Finals\\; semi\\, "A" \\\\ B');
    const feed = parseAll(r.text);
    expect(feed.name).toBe(st.organisation.name);
    const byUid = new Map(feed.events.map((e) => [e.uid, e]));
    for (const s of shown) {
      const e = byUid.get(`session-${s.id}@sandbox.extracurricular.invalid`)!;
      expect(e.summary).toBe(s.title);
      expect([e.start, e.end]).toEqual([Math.floor(s.start / 1000) * 1000, Math.floor(s.end / 1000) * 1000]);
      expect(e.status).toBe(s.cancelled ? 'CANCELLED' : s.status === 'confirmed' ? 'CONFIRMED' : 'TENTATIVE');
      if (s.studentParentNotes) expect(e.description.startsWith(s.studentParentNotes)).toBe(true);
      const loc = s.locationId === null ? undefined : st.locations.find((l) => l.id === s.locationId);
      expect(e.location).toBe(loc ? (loc.address ? `${loc.name}, ${loc.address}` : loc.name) : '');
      if (loc?.latitude != null && loc.longitude != null)
        expect(e.geo).toEqual({ lat: loc.latitude, lon: loc.longitude });
    }
    expect(shown.some((s) => s.cancelled)).toBe(true);
    expect(byUid.get(`session-${s0.id}@sandbox.extracurricular.invalid`)?.summary).toContain('決勝戦');
  });

  it('an unknown format is a 400', async () => {
    expect((await call(sb, 'GET', '/sessions?format=pdf')).status).toBe(400);
  });
});
