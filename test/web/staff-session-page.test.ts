// The coach's session page probed from outside (issue 43 review), on a school whose upstream strings are hostile
// (markup, control and bidi characters, a phone number carrying an attribute): every name, condition and phone is
// text, a tel: link dials digits alone; the page is never cached; a session of another team, a nonexistent one and
// a malformed id (strings, huge numbers, ../, non-ASCII digits, a NUL, an unknown ?school=) get the same 404 to the
// byte, each refusal audited; a view is audited once, and a HEAD (which shows nothing) is not audited as a view.
// "My teams" (/staff) names who is out and why (family reasons may be health-related): each view is audited too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StaffUser, Team } from '../../src/domain/types.ts';
import { staffAccess } from '../../src/identity/roles.ts';
import type { Harness } from '../feeds/harness.ts';
import {
  browse,
  type CoachSite,
  CookieJar,
  coachSite,
  type PulledSchool,
  type StaffSite,
  signIn,
} from '../identity/harness.ts';

let world: CoachSite;
let h: Harness;
let site: StaffSite;
let coach: StaffUser;
let mine: Team;
let other: Team;
let mySession: number;
let mySessionEnd: string;
/** How far the site's clock is ahead of the sandbox's (the past-session rule is tried by moving it). */
let shift = 0;
let otherSession: number;
const jar = new CookieJar();

/** Upstream strings a page must show as text: markup, control and bidi characters, an attribute in a phone. */
function hostile(h: Harness): void {
  const LONG = 'Wolfeschlegelsteinhausenbergerdorffvoralternwarengewissenhaft';
  for (const st of h.sandbox.school.students) {
    st.firstName = `<img src=x onerror=alert(1)>\u0007\u202e${st.firstName}`;
    for (const g of st.guardians) {
      g.firstName = `"><script>xss()</script>${g.firstName}`;
      g.lastName = `${LONG}${g.lastName}`;
      g.relationship = '<b>rel</b>';
      g.mobileNumber = `${g.mobileNumber}" onclick="x" javascript:alert(1)`;
    }
    for (const c of st.medicalConditions) {
      c.name = `</div><script>med()</script>${c.name}`;
      c.notes = `${LONG}${LONG}`;
    }
  }
}

/** A coach with a session of their own team, and a session of another team only. */
async function pick({ teams, staff }: PulledSchool, h: Harness) {
  const sessions = await h.store.records.list('hill', 'sessions');
  for (const u of staff) {
    const a = staffAccess(u, teams);
    const t = teams.find((x) => a.assignedTeamIds.has(x.id));
    if (!t) continue;
    const o = teams.find(
      (x) =>
        x.id !== t.id &&
        sessions.some(
          (y) =>
            !y.meta.deletedAt && !y.teams.some((z) => z.id === t.id) && y.teams.some((z) => z.id === x.id),
        ),
    );
    const s = t && sessions.find((x) => !x.meta.deletedAt && x.teams.some((y) => y.id === t.id));
    const so =
      o &&
      sessions.find(
        (x) =>
          !x.meta.deletedAt && !x.teams.some((y) => y.id === t!.id) && x.teams.some((y) => y.id === o.id),
      );
    if (t && o && s && so)
      return { coach: u, mine: t, other: o, mySession: s.id, mySessionEnd: s.end, otherSession: so.id };
  }
  throw new Error('no coach with a session of their own team and another team’s in the generated school');
}

beforeAll(async () => {
  const w = await coachSite({
    beforePull: hostile,
    pick,
    site: (_, h) => ({ now: () => new Date(Date.parse(h.sandbox.now()) + shift) }),
  });
  world = w;
  ({ h, site, coach, mine, other, mySession, mySessionEnd, otherSession } = w);
  await signIn(jar, site.url, String(coach.id));
}, 300_000);

afterAll(() => world?.close());

const get = (path: string, method = 'GET') => browse(jar, `${site.url}${path}`, { method });

describe('the session page, probed from outside', () => {
  it('hostile upstream strings are text; the page is not cached; its view is audited', async () => {
    const ok = await get(`/staff/teams/${mine.id}/sessions/${mySession}?school=hill`);
    expect(ok.res.status).toBe(200);
    expect(ok.res.headers.get('cache-control')).toBe('no-store');
    expect(ok.res.headers.get('etag')).toBeNull();
    for (const bad of ['<script>', '<img', 'onclick="', '<b>', '\u0007', '\u202e'])
      expect(ok.body).not.toContain(bad);
    expect(ok.body).toContain('&lt;img src=x onerror=alert(1)&gt;');
    // The way back to My teams is in the header, at the top of a long roster, not only under it.
    expect(ok.body).toMatch(/<header>.*<nav><a href="\/staff">My teams<\/a><\/nav>.*<\/header>/s);
    const tel = [...ok.body.matchAll(/href="(tel:[^"]*)"/g)].map((m) => m[1]!);
    expect(tel.length).toBeGreaterThan(0);
    for (const t of tel) expect(t).toMatch(/^tel:\+?\d+$/);
    const head = await get(`/staff/teams/${mine.id}/sessions/${mySession}?school=hill`, 'HEAD');
    expect(head.res.status).toBe(200);
    expect(head.body).toBe('');
    const views = await h.store.access.listAudit({ actor: coach.email!, action: 'session-medical-contacts' });
    expect(views.length).toBe(1);
    expect(views[0]).toMatchObject({ schoolId: 'hill', teamId: mine.id, sessionId: mySession });
  });

  it('each view of My teams (who is out, and why) is audited once; a HEAD is not a view', async () => {
    const mine0 = async () =>
      (await h.store.access.listAudit({ actor: coach.email!, action: 'my-teams' })).length;
    const before = await mine0();
    const page = await get('/staff');
    expect(page.res.status).toBe(200);
    expect(await mine0()).toBe(before + 1);
    const [last] = await h.store.access.listAudit({ actor: coach.email!, action: 'my-teams' });
    expect(last).toMatchObject({ schoolId: 'hill', action: 'my-teams' });
    const head = await get('/staff', 'HEAD');
    expect(head.res.status).toBe(200);
    expect(head.body).toBe('');
    expect(await mine0()).toBe(before + 1);
    await get('/staff');
    expect(await mine0()).toBe(before + 2);
  });

  it('another team’s session, a nonexistent one and malformed ids: the same 404 to the byte, each refusal audited', async () => {
    const none = await get(`/staff/teams/${mine.id}/sessions/987654321?school=hill`);
    expect(none.res.status).toBe(404);
    expect(none.res.headers.get('cache-control')).toBe('no-store');
    const before = (await h.store.access.listAudit({ actor: coach.email!, action: 'roster-refused' })).length;
    const probes = [
      `/staff/teams/${mine.id}/sessions/${otherSession}?school=hill`,
      `/staff/teams/${other.id}/sessions/${otherSession}?school=hill`,
      `/staff/teams/987654321/sessions/${mySession}?school=hill`,
      `/staff/teams/${mine.id}/sessions/abc?school=hill`,
      `/staff/teams/${mine.id}/sessions/-1?school=hill`,
      `/staff/teams/${mine.id}/sessions/0?school=hill`,
      `/staff/teams/${mine.id}/sessions/999999999999999?school=hill`,
      `/staff/teams/${mine.id}/sessions/99999999999999999999999?school=hill`,
      `/staff/teams/${mine.id}/sessions/%2e%2e%2f${mySession}?school=hill`,
      `/staff/teams/${mine.id}/sessions/..%2F..%2Fstaff?school=hill`,
      `/staff/teams/${mine.id}/sessions/%D9%A1%D9%A2?school=hill`,
      `/staff/teams/${mine.id}/sessions/${mySession}%00?school=hill`,
      `/staff/teams/${mine.id}/sessions/${mySession}?school=nope`,
    ];
    for (const p of probes) {
      const r = await get(p);
      expect(r.res.status, p).toBe(404);
      expect(r.body === none.body, p).toBe(true);
    }
    const refused = await h.store.access.listAudit({ actor: coach.email!, action: 'roster-refused' });
    expect(refused.length - before).toBe(probes.length);
    const headOther = await get(`/staff/teams/${mine.id}/sessions/${otherSession}?school=hill`, 'HEAD');
    const headNone = await get(`/staff/teams/${mine.id}/sessions/987654321?school=hill`, 'HEAD');
    expect(headOther.res.status).toBe(404);
    expect(headOther.res.headers.get('content-length')).toBe(headNone.res.headers.get('content-length'));
  });
  it('a past session opens for the school’s syncWindow.daysBack after it ended, as its sheets do; later, neither', async () => {
    const DAY = 86_400_000;
    const page = `/staff/teams/${mine.id}/sessions/${mySession}?school=hill`;
    const sheet = `/rosters/teams/${mine.id}.pdf?school=hill&session=${mySession}&template=attendance-sheet`;
    const daysBack = h.school.syncWindow.daysBack;
    const endedAgo = (days: number) => Date.parse(mySessionEnd) + days * DAY - Date.parse(h.sandbox.now());
    try {
      shift = endedAgo(daysBack - 1);
      expect((await get(page)).res.status).toBe(200);
      expect((await get(sheet)).res.status).toBe(200);
      shift = endedAgo(daysBack + 1);
      const old = await get(page);
      expect(old.res.status).toBe(404);
      expect(old.body).toContain(`ended more than ${daysBack} days ago`);
      const oldSheet = await browse(jar, `${site.url}${sheet}`, { headers: { accept: 'application/pdf' } });
      expect(oldSheet.res.status).toBe(404);
      expect(oldSheet.body).toContain(`ended more than ${daysBack} days ago`);
      const refused = await h.store.access.listAudit({
        actor: coach.email!,
        action: 'roster-refused',
        limit: 2,
      });
      expect(refused.map((r) => r.sessionId)).toEqual([mySession, mySession]);
    } finally {
      shift = 0;
    }
  });
});
