// Sandbox → client → pull → SQLite store → projection → ICS, parsed back with two parsers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUDIENCE_OF, type FeedDef, listFeedDefs } from '../../src/feeds/feed-defs.ts';
import { candidateQuery } from '../../src/feeds/feed-scope.ts';
import type { RenderedFeed } from '../../src/feeds/feed-service.ts';
import { localClock, offsetMinutes } from '../../src/util/time-zone.ts';
import { type Harness, startHarness } from './harness.ts';
import { type ParsedFeed, parseBoth } from './parse.ts';

let h: Harness;
let defs: FeedDef[];
const SCHOOL = 'hill';
/** The UIDs' domain: the school's, then this (new) installation's own (calendar/uid.ts). */
let at: string;

const parsed = new Map<string, ParsedFeed>();

/** The feed rendered now, parsed by both parsers (once per distinct body). */
async function feed(
  def: Pick<FeedDef, 'scope' | 'scopeId'>,
): Promise<{ r: RenderedFeed; p: ParsedFeed; text: string }> {
  const r = (await h.feeds.get(SCHOOL, def.scope, def.scopeId))!;
  const text = r.body.toString('utf8');
  let p = parsed.get(r.etag);
  if (!p) {
    p = parseBoth(text);
    parsed.set(r.etag, p);
  }
  return { r, p, text };
}

beforeAll(async () => {
  h = await startHarness();
  defs = await listFeedDefs(h.store, SCHOOL);
  at = `${SCHOOL}.${await h.store.feeds.uidDomain()}.rostercal`;
});
afterAll(async () => {
  await h?.close();
});

describe('every feed of the school', () => {
  it('parses with ical.js and node-ical, with the right events, times and UIDs', async () => {
    const w = h.feeds.currentWindow();
    expect(defs.filter((d) => d.scope === 'team').length).toBe(h.sandbox.school.teams.length);
    expect(defs.some((d) => d.scope === 'student')).toBe(true);
    expect(defs.some((d) => d.scope === 'staff')).toBe(true);
    expect(defs.some((d) => d.scope === 'activity')).toBe(true);
    let checked = 0;
    for (const def of defs) {
      const { p, r } = await feed(def);
      const sessions = await h.store.records.listSessions(
        SCHOOL,
        candidateQuery(def.scope, def.scopeId, w.from.toISOString(), w.to.toISOString()),
      );
      const visible = sessions.filter((s) => AUDIENCE_OF[def.scope] === 'staff' || s.status !== 'draft');
      expect(p.events.length, `${def.scope} ${def.scopeId}`).toBe(visible.length);
      expect(r.eventCount).toBe(visible.length);
      const byUid = new Map(p.events.map((e) => [e.uid, e]));
      for (const s of visible) {
        const e = byUid.get(`session-${s.id}-${def.scope}-${def.scopeId}@${at}`);
        expect(e, `session ${s.id} in ${def.scope} ${def.scopeId}`).toBeDefined();
        expect(e!.start).toBe(Date.parse(s.start));
        expect(e!.end).toBe(Date.parse(s.end));
        expect(e!.sequence).toBe(s.meta.version);
        expect(e!.status).toBe(
          s.cancelled ? 'CANCELLED' : s.status === 'confirmed' ? 'CONFIRMED' : 'TENTATIVE',
        );
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(100);
  });

  it('writes school-local times that stay right across a daylight-saving change', async () => {
    const tz = h.sandbox.school.timeZone;
    const activity = defs.find((d) => d.scope === 'activity')!;
    // The activity feed with the most events spans the window; find events on both sides of an offset change.
    const all = await Promise.all(defs.filter((d) => d.scope === 'activity').map((d) => feed(d)));
    const events = all.flatMap((f) => f.p.events);
    const offsets = new Set(events.map((e) => offsetMinutes(e.start, tz)));
    expect(offsets.size, `events on both sides of a DST change in ${tz}`).toBeGreaterThan(1);
    const { text } = await feed(activity);
    for (const e of all.flatMap((f) => f.p.events)) {
      const w = localClock(e.start, tz);
      const local = `${w.year}${String(w.month).padStart(2, '0')}${String(w.day).padStart(2, '0')}T${String(w.hour).padStart(2, '0')}${String(w.minute).padStart(2, '0')}00`;
      const f = all.find((x) => x.p.events.includes(e))!;
      expect(f.text).toContain(`DTSTART;TZID=${tz}:${local}`);
    }
    expect(text).toContain(`BEGIN:VTIMEZONE\r\nTZID:${tz}`);
  });

  it('renders the same bytes in bulk (renderSchool) as one feed at a time', async () => {
    const single = new Map<string, string>();
    for (const def of defs) {
      single.set(`${def.scope}:${def.scopeId}`, (await h.feeds.get(SCHOOL, def.scope, def.scopeId))!.etag);
    }
    h.feeds.invalidate();
    const summary = await h.feeds.renderSchool(SCHOOL, { all: true });
    expect(summary.feeds).toBe(defs.length);
    for (const def of defs) {
      const r = (await h.feeds.get(SCHOOL, def.scope, def.scopeId))!;
      expect(r.etag, `${def.scope} ${def.scopeId}`).toBe(single.get(`${def.scope}:${def.scopeId}`));
    }
  });
});

describe('privacy', () => {
  const studentNames = () => h.sandbox.school.students.flatMap((s) => [`${s.firstName} ${s.lastName}`]);

  it('team and activity feeds name no student; a student feed names no other student', async () => {
    const names = studentNames();
    for (const def of defs.filter((d) => d.scope === 'team' || d.scope === 'activity')) {
      const { text, p } = await feed(def);
      const readable = `${text}\n${p.events.map((e) => `${e.summary}\n${e.description}\n${e.location}`).join('\n')}`;
      for (const n of names) expect(readable, `${def.scope} ${def.scopeId}`).not.toContain(n);
    }
    const students = defs.filter((d) => d.scope === 'student');
    let withEvents = 0;
    for (const def of students) {
      const { text, p } = await feed(def);
      if (p.events.length) withEvents++;
      const readable = `${text}\n${p.events.map((e) => `${e.summary}\n${e.description}`).join('\n')}\n${p.name}`;
      for (const n of names)
        if (n !== def.subject) expect(readable, `student ${def.scopeId}`).not.toContain(n);
    }
    expect(withEvents).toBeGreaterThan(10);
  });

  it('staff-only custom fields never reach a guardian feed; staff feeds show them', async () => {
    const staffOnly = h.sandbox.school.customFields.filter(
      (f) => !f.showToUserTypes.includes('guardian') && !f.showToUserTypes.includes('student'),
    );
    expect(staffOnly.length).toBeGreaterThan(0);
    const sessions = await h.store.records.listSessions(SCHOOL, {});
    const staffOnlyTexts = new Set<string>();
    for (const s of sessions) {
      for (const data of [s.customFieldsData, ...s.teams.map((t) => t.customFieldsData)]) {
        for (const f of staffOnly) {
          const v = data[f.key];
          if (typeof v === 'string' && v.length > 8) staffOnlyTexts.add(v);
        }
      }
    }
    expect(staffOnlyTexts.size).toBeGreaterThan(0);
    let seenInStaff = 0;
    for (const def of defs) {
      const { text, p } = await feed(def);
      const readable = p.events.map((e) => e.description).join('\n');
      if (def.audience === 'staff') {
        for (const v of staffOnlyTexts) if (readable.includes(v)) seenInStaff++;
        continue;
      }
      for (const f of staffOnly) expect(readable).not.toContain(`${f.label}:`);
      for (const v of staffOnlyTexts) expect(text.replace(/\r\n /g, '')).not.toContain(v.slice(0, 20));
      for (const v of staffOnlyTexts) expect(readable).not.toContain(v);
    }
    expect(seenInStaff).toBeGreaterThan(0);
  });
});

describe('upstream changes flow into the feeds', () => {
  it('new session notes, edits (SEQUENCE), cancellations (STATUS) and deletions (absence)', async () => {
    const team = defs
      .filter((d) => d.scope === 'team')
      .sort((a, b) => b.subject.localeCompare(a.subject))[0]!;
    const before = await feed(team);
    const nowMs = Date.parse(h.sandbox.now());
    const future = (
      await h.store.records.listSessions(SCHOOL, { teamIds: [team.scopeId], from: h.sandbox.now() })
    )
      .filter((s) => !s.cancelled && s.status !== 'draft' && Date.parse(s.start) > nowMs + 86_400_000)
      .slice(0, 3);
    expect(future.length).toBe(3);
    const [edited, cancelled, deleted] = future as [
      (typeof future)[0],
      (typeof future)[0],
      (typeof future)[0],
    ];
    // A team whose sessions none of the changes touch: its render must survive the sync untouched.
    const touched = new Set(future.map((s) => s.id));
    const otherTeams: FeedDef[] = [];
    for (const d of defs.filter((x) => x.scope === 'team' && x.scopeId !== team.scopeId)) {
      const sessions = await h.store.records.listSessions(SCHOOL, { teamIds: [d.scopeId] });
      if (!sessions.some((s) => touched.has(s.id) || s.teams.some((t) => t.id === team.scopeId)))
        otherTeams.push(d);
    }
    expect(otherTeams.length).toBeGreaterThan(0);
    const untouchedBefore = (await h.feeds.get(SCHOOL, 'team', otherTeams[0]!.scopeId))!;
    const coach = h.sandbox.school.users.find((u) => !u.frozen)!;
    const staffMember = h.sandbox.school.users.find((u) => !u.frozen && u.id !== coach.id)!;

    const created = await h.client.createSessions({
      email: coach.email,
      sessions: [
        {
          title: 'Extra training',
          activityId: edited.activity.id,
          startDateTime: new Date(nowMs + 3 * 86_400_000).toISOString(),
          endDateTime: new Date(nowMs + 3 * 86_400_000 + 5_400_000).toISOString(),
          teamIds: [team.scopeId],
          staffIds: [staffMember.id],
          notes: 'INTERNAL-7Q: parent complaint file 42, do not share',
          studentParentNotes: 'PARENTS-7Q: bring a water bottle, pick-up at the canteen',
        },
      ],
    });
    const newId = created[0]!.id;
    const movedStart = new Date(Date.parse(edited.start) + 3_600_000).toISOString();
    const movedEnd = new Date(Date.parse(edited.end) + 3_600_000).toISOString();
    await h.client.updateSessions({
      email: coach.email,
      sessions: [
        {
          id: edited.id,
          startDateTime: movedStart,
          endDateTime: movedEnd,
          studentParentNotes: 'Moved one hour later',
        },
        { id: cancelled.id, cancelled: true },
      ],
    });
    await h.client.deleteSessions({ email: coach.email, sessionIds: [deleted.id] });
    await h.pull('full');

    const after = await feed(team);
    const untouchedAfter = (await h.feeds.get(SCHOOL, 'team', otherTeams[0]!.scopeId))!;
    expect(untouchedAfter.dataVersion).toBeGreaterThan(untouchedBefore.dataVersion);
    expect(untouchedAfter.body).toBe(untouchedBefore.body); // the same buffer: not rendered again
    expect(after.r.inputs).not.toBe(before.r.inputs);
    const uidOf = (id: number) => `session-${id}-team-${team.scopeId}@${at}`;
    const get = (p: ParsedFeed, id: number) => p.events.find((e) => e.uid === uidOf(id));

    const e0 = get(before.p, edited.id)!;
    const e1 = get(after.p, edited.id)!;
    expect(e1.sequence).toBeGreaterThan(e0.sequence);
    expect(e1.start).toBe(Date.parse(movedStart));
    expect(e1.description).toContain('Moved one hour later');
    expect(after.text).toMatch(new RegExp(`UID:${uidOf(edited.id).replace(/\./g, '\\.')}`));

    const c = get(after.p, cancelled.id)!;
    expect(c.status).toBe('CANCELLED');
    expect(c.summary.startsWith('Cancelled: ')).toBe(true);
    expect(c.sequence).toBeGreaterThan(get(before.p, cancelled.id)!.sequence);

    expect(get(before.p, deleted.id)).toBeDefined();
    expect(get(after.p, deleted.id)).toBeUndefined();
    expect(after.r.etag).not.toBe(before.r.etag);
    expect(after.r.lastModified.getTime()).toBeGreaterThanOrEqual(before.r.lastModified.getTime());

    // The new session: parent notes for guardians, internal notes for staff only.
    const fresh = get(after.p, newId)!;
    expect(fresh.description).toContain('PARENTS-7Q: bring a water bottle');
    for (const def of defs.filter((d) => d.audience !== 'staff')) {
      const { text } = await feed(def);
      expect(text.replace(/\r\n /g, '')).not.toContain('INTERNAL-7Q');
    }
    const staffFeed = await feed({ scope: 'staff', scopeId: staffMember.id });
    const staffEvent = staffFeed.p.events.find(
      (e) => e.uid === `session-${newId}-staff-${staffMember.id}@${at}`,
    )!;
    expect(staffEvent.description).toContain('INTERNAL-7Q: parent complaint file 42');
    expect(staffEvent.description).toContain('PARENTS-7Q');
  });
});

describe('SEQUENCE and LAST-MODIFIED follow what each audience sees (issue 13 item 5)', () => {
  it('renaming a staff member changes no guardian or student feed (same bytes, same ETag); the staff feed advances', async () => {
    // A staff member with sessions in the window, seen in guardian feeds too.
    const w = h.feeds.currentWindow();
    const sessions = await h.store.records.listSessions(SCHOOL, {
      from: w.from.toISOString(),
      to: w.to.toISOString(),
    });
    const counts = new Map<number, number>();
    for (const s of sessions) for (const p of s.staff) counts.set(p.id, (counts.get(p.id) ?? 0) + 1);
    const [staffId] = [...counts].sort((a, b) => b[1] - a[1])[0]!;
    const user = h.sandbox.school.users.find((u) => u.id === staffId)!;
    const family = defs.filter((d) => d.audience !== 'staff');
    const before = new Map<string, string>();
    for (const d of family) before.set(`${d.scope}:${d.scopeId}`, (await feed(d)).r.etag);
    const staffBefore = await feed({ scope: 'staff', scopeId: staffId });
    const versionsBefore = new Map(sessions.map((s) => [s.id, s.meta.version]));

    user.firstName = 'Renamedfirst';
    user.updatedAt = Date.parse(h.sandbox.now());
    h.sandbox.setNow(h.sandbox.now()); // the sandbox caches listings per state version: this bumps it
    await h.pull('full');

    // The session records did change (they list their staff): that is what used to move every SEQUENCE.
    const after = await h.store.records.listSessions(SCHOOL, {
      from: w.from.toISOString(),
      to: w.to.toISOString(),
    });
    const bumped = after.filter(
      (s) => s.staff.some((p) => p.id === staffId) && s.meta.version > (versionsBefore.get(s.id) ?? 0),
    );
    expect(bumped.length).toBeGreaterThan(0);
    let guardianEventsOfBumped = 0;
    for (const d of family) {
      const { r, p } = await feed(d);
      expect(r.etag, `${d.scope} ${d.scopeId}`).toBe(before.get(`${d.scope}:${d.scopeId}`));
      guardianEventsOfBumped += p.events.filter((e) =>
        bumped.some((s) => e.uid.startsWith(`session-${s.id}-`)),
      ).length;
    }
    expect(guardianEventsOfBumped).toBeGreaterThan(0);

    // The staff feed shows staff names: its events of those sessions advance.
    const staffAfter = await feed({ scope: 'staff', scopeId: staffId });
    expect(staffAfter.r.etag).not.toBe(staffBefore.r.etag);
    let advanced = 0;
    for (const e of staffAfter.p.events) {
      const old = staffBefore.p.events.find((x) => x.uid === e.uid);
      if (!old) continue;
      if (e.description.includes('Renamedfirst')) {
        expect(e.sequence).toBeGreaterThan(old.sequence);
        advanced++;
      } else expect(e.sequence).toBe(old.sequence);
    }
    expect(advanced).toBeGreaterThan(0);
  });
});
