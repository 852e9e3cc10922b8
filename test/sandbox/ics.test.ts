import ICAL from 'ical.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
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

  it('an unknown format is a 400', async () => {
    expect((await call(sb, 'GET', '/sessions?format=pdf')).status).toBe(400);
  });
});
