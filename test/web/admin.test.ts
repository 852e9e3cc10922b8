// The admin dashboard /admin (web/admin.ts) over HTTP, on the staff site of a school pulled from the sandbox into a
// real SQLite store: ADMIN_TOKEN (automation, break-glass) gets the school's runs and every team's rosters; a coach
// signed in through the real OpenID provider is refused (403, not a 500), a visitor sent to sign in, and curl told
// in a line. The dashboard shows no feed URL (capabilities: the search hands them out one at a time).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StaffUser, Team } from '../../src/domain/types.ts';
import { browse, type CoachSite, CookieJar, coachSite, type StaffSite, signIn } from '../identity/harness.ts';

const TOKEN = 'admin-dashboard-token-0123456789abcdef';
let world: CoachSite;
let site: StaffSite;
let coach: StaffUser;
let teams: Team[];

beforeAll(async () => {
  // Any member of staff who signs in as staff (the first), not necessarily one with a team of their own.
  world = await coachSite({
    seed: 26,
    pick: ({ staff }) => ({ coach: staff[0]! }),
    site: () => ({ adminToken: TOKEN }),
  });
  ({ site, coach, teams } = world);
}, 120_000);
afterAll(() => world?.close());

const asAdmin = (path: string) =>
  fetch(`${site.url}${path}`, { headers: { authorization: `Bearer ${TOKEN}`, accept: 'text/html' } });

describe('/admin', () => {
  it("ADMIN_TOKEN: the school's runs and every visible team's rosters, wide, never cached, no feed URL", async () => {
    const res = await asAdmin('/admin');
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const page = await res.text();
    expect(page).toContain('<h1>Admin</h1>');
    expect(page).toContain('<main class="wide">');
    expect(page).toContain('Hillcrest College');
    expect(page).toMatch(/full[\s\S]{0,200}succeeded/);
    for (const t of teams) expect(page, t.name).toContain(`/rosters/teams/${t.id}.pdf`);
    expect(page).not.toMatch(/\/(feeds|family)\/[A-Za-z0-9_-]{32}/);
    expect(page).not.toContain(TOKEN);
  });

  it('a wrong bearer: 401 in a line; a visitor: sent to sign in', async () => {
    const wrong = await fetch(`${site.url}/admin`, { headers: { authorization: 'Bearer nope' } });
    expect(wrong.status).toBe(401);
    const visitor = await fetch(`${site.url}/admin`, {
      headers: { accept: 'text/html' },
      redirect: 'manual',
    });
    expect([302, 303]).toContain(visitor.status);
    expect(visitor.headers.get('location')).toMatch(/^\/auth\/login\?returnTo=%2Fadmin/);
  });

  it('a coach signed in is refused with a 403 page, not the dashboard', async () => {
    const jar = new CookieJar();
    await signIn(jar, site.url, String(coach.id));
    const { res, body } = await browse(jar, `${site.url}/admin`);
    expect(res.status).toBe(403);
    expect(body).not.toContain('<h1>Admin</h1>');
    expect(body).not.toContain('/rosters/teams/');
  });
});
