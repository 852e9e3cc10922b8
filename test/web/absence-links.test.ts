// Which children a calendar link may report absences for (web/absence-links.ts), on the sandbox's school pulled into
// a real SQLite store with real feed tokens, feeds and family links: a child's own link names that child (by the
// family label of their first name) and the sessions its page lists; a team's link, or a child no longer in the
// store, none; a family link only its children, not its teams. Over HTTP on the real app: a child's page offers
// "Can't make it?" only where families' absences are on, a team's page never; `?done=` shows only its own words, and only where the page agrees.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { familyLabel } from '../../src/calendar/family.ts';
import { FamilyLinks } from '../../src/feeds/family.ts';
import { hashToken, resolveFeedToken } from '../../src/feeds/tokens.ts';
import { DONE_WORDS } from '../../src/web/absence-done.ts';
import { childLink, familyLink } from '../../src/web/absence-links.ts';
import type { RunningServer } from '../../src/web/server.ts';
import { familyAbsences, type Harness, httpCall, startHarness } from '../feeds/harness.ts';
import { absenceForm, childWithForm, PUBLIC } from './absence-page.ts';

let h: Harness;
let server: RunningServer;
let without: RunningServer;

beforeAll(async () => {
  h = await startHarness({ seed: 33 });
  server = await h.serve({ publicUrl: PUBLIC, absences: familyAbsences(h) });
  without = await h.serve({ publicUrl: PUBLIC });
}, 120_000);
afterAll(() => h?.close());

const team = async () =>
  (await h.store.records.list('hill', 'teams')).find((t) => !t.hidden && t.students.length)!;
const feedOf = async (scope: 'student' | 'team', id: number) => (await h.feeds.get('hill', scope, id))!;

describe('the reporting link of a calendar link', () => {
  it('a child’s own link: that child, by the family label of their first name, and the sessions their page lists', async () => {
    const { student, token } = await childWithForm(h, server.url);
    const record = (await resolveFeedToken(h.store, token))!;
    const feed = await feedOf('student', student.id);
    expect(feed.upcoming.length).toBeGreaterThan(0);
    const link = await childLink(h.store, record, feed);
    expect(link).toEqual({
      schoolId: 'hill',
      kind: 'child',
      tokenHash: hashToken(token),
      children: [{ studentId: student.id, label: familyLabel(student.firstName) }],
      shown: new Set(feed.upcoming.map((e) => e.sessionId)),
    });
    // A child the store no longer has: nothing to report for.
    expect(await childLink(h.store, { ...record, scopeId: 987_654_321 }, feed)).toBeNull();
  });

  it('a team’s link names no child', async () => {
    const t = await team();
    const token = (await h.tokens.ensure('hill', 'team', t.id)).token!;
    const record = (await resolveFeedToken(h.store, token))!;
    expect(await childLink(h.store, record, await feedOf('team', t.id))).toBeNull();
  });

  it('a family link: its children only (not its team), the sessions its page lists, the hash of its own token', async () => {
    const { student, token } = await childWithForm(h, server.url);
    const t = await team();
    const teamToken = (await h.tokens.ensure('hill', 'team', t.id)).token!;
    const families = new FamilyLinks({ store: h.store, feeds: h.feeds });
    const made = await families.create([token, teamToken]);
    if (!made.ok) throw new Error(`no family link: ${made.message}`);
    const feed = (await families.get(made.token))!;
    expect(feed.members.map((m) => m.scope).sort()).toEqual(['student', 'team']);
    const link = familyLink(made.token, feed);
    expect(link.kind).toBe('family');
    expect(link.schoolId).toBe('hill');
    expect(link.tokenHash).toBe(hashToken(made.token));
    expect(link.children.map((c) => c.studentId)).toEqual([student.id]);
    expect(link.shown).toEqual(new Set(feed.upcoming.map((e) => e.sessionId)));
  });
});

describe('the page’s "Can’t make it?"', () => {
  it('a child’s page offers it only where families’ absences are on; a team’s page never', async () => {
    const { token } = await childWithForm(h, server.url);
    expect(await absenceForm(without.url, `${PUBLIC}/feeds/${token}`)).toBeNull();
    const teamToken = (await h.tokens.ensure('hill', 'team', (await team()).id)).token!;
    const page = await httpCall(`${server.url}/feeds/${teamToken}`);
    expect(page.status).toBe(200);
    expect(page.text).not.toContain('/absences"');
    expect(page.text).not.toContain('Can\u2019t make it?');
  });

  it('?done= shows the words of what was done where the page agrees, and nothing for any other word', async () => {
    const { token } = await childWithForm(h, server.url);
    const status = async (done: string) => {
      const r = await httpCall(`${server.url}/feeds/${token}?done=${done}`);
      return /<p class="absence-done" role="status">([^<]*)<\/p>/.exec(r.text)?.[1];
    };
    // Nothing stands reported on the page: "Undone" agrees with it.
    expect(await status('withdrawn')).toBe(DONE_WORDS.withdrawn);
    // A report's words need its session to be checked against (absence-banner.test.ts): with none, nothing.
    expect(await status('pending')).toBeUndefined();
    for (const other of ['toString', 'constructor', 'bogus', ''])
      expect(await status(other), other).toBeUndefined();
  });
});
