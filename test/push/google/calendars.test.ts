// push/google/calendars.ts through the real Calendar client against the fake Google over HTTP: a calendar is
// created once with its share rules, found again by its marker after a lost database, made public once when
// families may add it; of a public calendar's generations the newest is kept and the others closed and handed
// back to retire; a dry run creates nothing; primary mode proves the account answers; gone counts as deleted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GoogleCalendars } from '../../../src/push/google/calendars.ts';
import { GoogleClients } from '../../../src/push/google/clients.ts';
import { calendarMarker } from '../../../src/push/stable-ids.ts';
import type { FakeGoogle } from '../../fakes/google-calendar.ts';
import { spec } from '../stage-calendars.ts';
import { googleOnFake, SCHOOL, settingsOn, TARGET } from './on-fake.ts';

const OWNER = { school: SCHOOL, target: TARGET };
const teamSpec = (key: string, over: Parameters<typeof spec>[1] = {}) =>
  spec(key, {
    marker: calendarMarker(SCHOOL, TARGET, key),
    description: calendarMarker(SCHOOL, TARGET, key),
    ...over,
  });

let fake: FakeGoogle;
let c: GoogleClients;
beforeAll(async () => {
  ({ fake, clients: c } = await googleOnFake({
    calendars: {
      share: [
        { role: 'writer', type: 'user', value: '{email}' },
        { role: 'freeBusyReader', type: 'domain', value: 'hill.example' },
      ],
    },
  }));
});
afterAll(() => fake?.close());

/** The rules rostercal added (not the owner's own). */
const rulesOf = (id: string) =>
  fake
    .calendar(id)!
    .acl.filter((r) => r.role !== 'owner')
    .map((r) => `${r.role} ${r.scope.type} ${r.scope.value ?? ''}`.trim());

describe('finding or creating Google calendars', () => {
  it('creates one with name, marker and zone and its share rules; one naming {email} only with an email', async () => {
    const cals = new GoogleCalendars(c, OWNER);
    const mine = await cals.ensure(teamSpec('staff:1', { memberEmail: 'ann@hill.example' }), false);
    const none = await cals.ensure(teamSpec('team:1'), false);
    expect(mine).toMatchObject({ ok: true, created: true });
    expect(none).toMatchObject({ ok: true, created: true });
    const made = fake.calendar(mine.ok ? mine.remoteCalendarId : '')!;
    expect([made.summary, made.description, made.timeZone]).toEqual([
      'Calendar staff:1',
      calendarMarker(SCHOOL, TARGET, 'staff:1'),
      'Europe/London',
    ]);
    expect(rulesOf(made.id)).toEqual(['writer user ann@hill.example', 'freeBusyReader domain hill.example']);
    expect(rulesOf(none.ok ? none.remoteCalendarId : '')).toEqual(['freeBusyReader domain hill.example']);
  });

  it('finds it again by its marker (a lost database) without creating; a dry run creates nothing', async () => {
    const first = await new GoogleCalendars(c, OWNER).ensure(teamSpec('team:2'), false);
    fake.resetStats();
    const again = await new GoogleCalendars(c, OWNER).ensure(teamSpec('team:2'), false);
    expect(again).toEqual({ ok: true, remoteCalendarId: first.ok && first.remoteCalendarId, created: false });
    expect(await new GoogleCalendars(c, OWNER).ensure(teamSpec('team:3'), true)).toEqual({
      ok: true,
      remoteCalendarId: '',
      created: true,
    });
    expect(fake.stats.byOperation['POST calendars.insert']).toBeUndefined();
  });

  it('public: keeps the newest generation, closes the others and hands them back; readable once per process', async () => {
    const pub = new GoogleClients(
      { ...c.settings, calendars: { ...c.settings.calendars, share: [], familiesMayAdd: true } },
      false,
    );
    const cals = new GoogleCalendars(pub, OWNER);
    const gen = async (g: number) =>
      (
        await pub.call('', true, (api) =>
          api.calendars.insert({
            requestBody: { summary: 'x', description: calendarMarker(SCHOOL, TARGET, 'team:4', g) },
          }),
        )
      ).data.id!;
    const [g1, g2] = [await gen(1), await gen(2)];
    await pub.call('', true, (api) =>
      api.acl.insert({ calendarId: g1, requestBody: { role: 'reader', scope: { type: 'default' } } }),
    );
    const kept = await cals.ensure(teamSpec('team:4', { generation: 1 }), false);
    expect(kept).toEqual({ ok: true, remoteCalendarId: g2, created: false, retire: [g1] });
    expect([rulesOf(g1), rulesOf(g2)]).toEqual([[], ['reader default']]);
    fake.resetStats();
    expect(await cals.ensure(teamSpec('team:4', { generation: 2, remoteCalendarId: g2 }), false)).toEqual(
      kept,
    );
    expect(fake.stats.byOperation['POST acl.insert']).toBeUndefined();
    const next = await cals.ensure(teamSpec('team:4', { generation: 3 }), false);
    expect(next).toMatchObject({ ok: true, created: true, retire: [g1, g2] });
    expect(rulesOf(next.ok ? next.remoteCalendarId : '')).toEqual(['reader default']);
  });

  it('closing or deleting a calendar already gone is fine', async () => {
    const cals = new GoogleCalendars(c, OWNER);
    const made = await cals.ensure(teamSpec('team:5'), false);
    const id = made.ok ? made.remoteCalendarId : '';
    await cals.deleteCalendar('', id);
    expect(fake.calendar(id)).toBeUndefined();
    await expect(cals.deleteCalendar('', id)).resolves.toBeUndefined();
    await expect(cals.closePublic('', id)).resolves.toBeUndefined();
  });

  it("primary mode answers 'primary' once the account answers; acting for no one is an account failure", async () => {
    const primary = { ...settingsOn(fake), calendars: { ...c.settings.calendars, mode: 'primary' as const } };
    fake.resetStats();
    const cals = new GoogleCalendars(new GoogleClients(primary, true), OWNER);
    expect(await cals.ensure(teamSpec('staff:2', { owner: 'bo@hill.example' }), false)).toEqual({
      ok: true,
      remoteCalendarId: 'primary',
      created: false,
    });
    expect(fake.stats.byOperation['GET calendars.get']).toBe(1);
    expect(await cals.ensure(teamSpec('staff:3'), false)).toEqual({
      ok: false,
      kind: 'account',
      reason: 'staff:3: no email address to act as',
    });
  });
});
