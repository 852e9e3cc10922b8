// GET /staff, "My teams" (web/staff-page.ts), over HTTP through the real OpenID sign-in, on a school pulled from the
// sandbox with its medical and guardian data into a real SQLite store: a coach sees their own teams with their
// sheets, no team they may not see; each view is audited; a visitor not signed in is sent to sign in, and / leads
// to /staff. (Who is out of each session: test/web/staff-session-page.test.ts; phone and desktop: staff-browser.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StaffUser, Team } from '../../src/domain/types.ts';
import { staffAccess } from '../../src/identity/roles.ts';
import type { Harness } from '../feeds/harness.ts';
import { browse, type CoachSite, CookieJar, coachSite, type StaffSite, signIn } from '../identity/harness.ts';

let world: CoachSite;
let h: Harness;
let site: StaffSite;
let coach: StaffUser;
let own: Team[];
let unseen: Team[];

beforeAll(async () => {
  world = await coachSite({ seed: 25 });
  ({ h, site, coach, coachTeams: own } = world);
  const access = staffAccess(coach, world.teams);
  unseen = world.teams.filter((t) => !access.teamIds.has(t.id));
}, 120_000);
afterAll(() => world?.close());

describe('/staff', () => {
  it('signed out: sent to sign in, coming back to /staff; / leads to /staff', async () => {
    const res = await fetch(`${site.url}/staff`, { headers: { accept: 'text/html' }, redirect: 'manual' });
    expect([302, 303]).toContain(res.status);
    expect(res.headers.get('location')).toMatch(/^\/auth\/login\?returnTo=%2Fstaff/);
    const root = await fetch(`${site.url}/`, { redirect: 'manual' });
    expect(root.status).toBe(303);
    expect(root.headers.get('location')).toBe('/staff');
  });

  it('a coach: their own teams with roster links, no team they may not see, never cached, the view audited', async () => {
    const jar = new CookieJar();
    await signIn(jar, site.url, String(coach.id));
    const before = (await h.store.access.listAudit({ actor: coach.email!, limit: 100 })).length;
    const { res, body } = await browse(jar, `${site.url}/staff`);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(body).toContain('<title>My teams · rostercal</title>');
    for (const t of own) {
      expect(body).toContain(t.name);
      expect(body).toContain(`/rosters/teams/${t.id}.pdf`);
    }
    for (const t of unseen) expect(body, t.name).not.toContain(`/teams/${t.id}.pdf`);
    const audit = await h.store.access.listAudit({ actor: coach.email!, limit: 100 });
    expect(audit.length).toBe(before + 1);
    expect(audit[0]).toMatchObject({ action: 'my-teams', template: 'my-teams', schoolId: 'hill' });
  });
});
