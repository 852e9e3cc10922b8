// push/outlook/calendars.ts through the real Graph client against the fake Graph over TLS: a calendar is created
// in the mailbox; asked again (a lost database) Graph refuses a second of the name (409 ErrorFolderExists) and the
// first is found; one known from an earlier run costs no request; a dry run only looks; an unusable mailbox is an
// account failure, remembered so nothing more is sent to it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureOutlookCalendar } from '../../../src/push/outlook/calendars.ts';
import type { OutlookClients } from '../../../src/push/outlook/clients.ts';
import type { FakeGraph } from '../../fakes/graph.ts';
import { spec } from '../stage-calendars.ts';
import { ANN, BO, outlookOnFake, UNLICENSED } from './on-fake.ts';

let fake: FakeGraph;
let c: OutlookClients;
beforeAll(async () => {
  ({ fake, clients: c } = await outlookOnFake());
});
afterAll(() => fake?.close());

const mailboxSpec = (owner: string | null, over: Parameters<typeof spec>[1] = {}) =>
  spec('staff:1', { name: "Ann's activities", owner, ...over });
const calendarNames = (upn: string) => [...fake.mailbox(upn)!.calendars.values()].map((x) => x.name);

describe('finding or creating an Outlook calendar', () => {
  it('creates it once; asked again it finds the one of that name (409 ErrorFolderExists), no duplicate', async () => {
    const made = await ensureOutlookCalendar(c, mailboxSpec(ANN), false);
    expect(made).toEqual({ ok: true, remoteCalendarId: expect.any(String), created: true });
    fake.resetStats();
    const again = await ensureOutlookCalendar(c, mailboxSpec(ANN), false);
    expect(again).toEqual({ ok: true, remoteCalendarId: made.ok && made.remoteCalendarId, created: false });
    expect(calendarNames(ANN).filter((n) => n === "Ann's activities")).toHaveLength(1);
    expect([
      fake.stats.byOperation['POST calendars.create'],
      fake.stats.byOperation['GET calendars.list'],
    ]).toEqual([1, 1]);
  });

  it('one known from an earlier run costs no request; a dry run looks and creates nothing', async () => {
    fake.resetStats();
    expect(
      await ensureOutlookCalendar(c, mailboxSpec(BO, { remoteCalendarId: 'AAkALgknown' }), false),
    ).toEqual({
      ok: true,
      remoteCalendarId: 'AAkALgknown',
      created: false,
    });
    expect(fake.stats.requests).toBe(0);
    expect(await ensureOutlookCalendar(c, mailboxSpec(BO), true)).toEqual({
      ok: true,
      remoteCalendarId: '',
      created: true,
    });
    expect(calendarNames(BO)).not.toContain("Ann's activities");
    const made = await ensureOutlookCalendar(c, mailboxSpec(BO), false);
    expect(await ensureOutlookCalendar(c, mailboxSpec(BO), true)).toEqual({
      ok: true,
      remoteCalendarId: made.ok && made.remoteCalendarId,
      created: false,
    });
  });

  it('an unusable mailbox is an account failure and is remembered; none at all is too; others are errors', async () => {
    const r = await ensureOutlookCalendar(c, mailboxSpec(UNLICENSED), false);
    expect(r).toEqual({
      ok: false,
      kind: 'account',
      reason: expect.stringMatching(
        new RegExp(`^staff:1 mailbox ${UNLICENSED}: 404 MailboxNotEnabledForRESTAPI: `),
      ),
    });
    expect(c.badMailboxes.has(UNLICENSED)).toBe(true);
    expect(await ensureOutlookCalendar(c, mailboxSpec(null), false)).toEqual({
      ok: false,
      kind: 'account',
      reason: 'staff:1: no mailbox',
    });
    fake.knobs.faults = [{ match: /^POST \/users\/.*\/calendars$/, status: 403 }];
    try {
      const refused = await ensureOutlookCalendar(c, mailboxSpec(ANN, { name: 'Other' }), false);
      expect(refused).toMatchObject({ ok: false, kind: 'error' });
      expect(c.badMailboxes.has(ANN)).toBe(false);
    } finally {
      fake.knobs.faults = [];
    }
  });
});
