// Everything staff reach, wired once (web/staff-web.ts: createStaffWeb), over HTTP on the sandbox's school pulled
// into a real SQLite store: in demo mode the in-process provider answers at /demo-idp on the site itself and signs
// staff in to My teams; HELP_CONTACT reaches the refusal pages; the daily prune, which start() also runs at once,
// deletes audit records past the retention and staff sessions that ended over a day ago, and keeps the rest.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StaffUser } from '../../src/domain/types.ts';
import type { StaffSession } from '../../src/store/types.ts';
import { type Harness, startHarness } from '../feeds/harness.ts';
import {
  auditRecord,
  browse,
  CookieJar,
  type StaffSite,
  signIn,
  staffPerson,
  startStaffSite,
} from '../identity/harness.ts';
import { freePort } from '../support/ports.ts';
import { until } from '../support/until.ts';

const DAY = 86_400_000;
const HELP = 'the IT office, it@hill.example';
const RETENTION_DAYS = 30;

let h: Harness;
let coach: StaffUser;
let site: StaffSite;

const ago = (ms: number) => new Date(Date.now() - ms).toISOString();
const audit = (actor: string, at: string) => auditRecord({ action: 'my-teams', actor, at });
const session = (idHash: string, revokedAt: string | null): StaffSession => ({
  idHash,
  email: 'pruned@hill.example',
  issuer: 'https://idp.example',
  subject: idHash,
  displayName: null,
  createdAt: ago(3 * DAY),
  lastSeenAt: ago(3 * DAY),
  expiresAt: new Date(Date.now() + DAY).toISOString(),
  revokedAt,
  clientAddress: null,
  userAgent: null,
});

beforeAll(async () => {
  h = await startHarness({ seed: 35 });
  const staff = await h.store.records.list('hill', 'staff');
  coach = staff.find((s) => s.email && !s.frozen && !s.isAdmin && !s.isManager) as unknown as StaffUser;
  // Before the site starts: its start() prunes at once.
  await h.store.access.appendAudit(audit('old@hill.example', ago((RETENTION_DAYS + 1) * DAY)));
  await h.store.access.appendAudit(audit('recent@hill.example', ago((RETENTION_DAYS - 1) * DAY)));
  await h.store.access.createStaffSession(session('a'.repeat(64), ago(2 * DAY)));
  await h.store.access.createStaffSession(session('b'.repeat(64), ago(DAY / 2)));
  await h.store.access.createStaffSession(session('c'.repeat(64), null));
  site = await startStaffSite(h, {
    port: await freePort(),
    idp: null,
    demoPeople: [staffPerson(coach)],
    helpContact: HELP,
    auditRetentionDays: RETENTION_DAYS,
  });
}, 120_000);
afterAll(async () => {
  await site?.close();
  await h?.close();
});

describe('the staff site', () => {
  it('demo mode: the provider on the site itself (/demo-idp) signs a member of staff in to My teams', async () => {
    const discovery = await fetch(`${site.url}/demo-idp/.well-known/openid-configuration`);
    expect(discovery.status).toBe(200);
    expect(((await discovery.json()) as { issuer: string }).issuer).toBe(`${site.url}/demo-idp`);
    const jar = new CookieJar();
    const { res, url, body } = await signIn(jar, site.url, String(coach.id));
    expect(res.status).toBe(200);
    expect(url).toBe(`${site.url}/staff`);
    expect(body).toContain('<title>My teams · rostercal</title>');
  });

  it('HELP_CONTACT reaches the refusal pages: a coach at /admin is told whom to ask', async () => {
    const jar = new CookieJar();
    await signIn(jar, site.url, String(coach.id));
    const { res, body } = await browse(jar, `${site.url}/admin`);
    expect(res.status).toBe(403);
    expect(body).toContain(`Ask ${HELP}.`);
  });

  it('start() prunes at once: audit records past the retention and sessions ended over a day ago; the rest stay', async () => {
    // start() does not wait for its prune, which ends with the sessions.
    await until(
      'the prune start() began',
      async () => !(await h.store.access.getStaffSession('a'.repeat(64))),
      10_000,
    );
    const actors = async () =>
      new Set((await h.store.access.listAudit({ limit: 10_000 })).map((r) => r.actor));
    const seen = await actors();
    expect(seen.has('old@hill.example')).toBe(false);
    expect(seen.has('recent@hill.example')).toBe(true);
    expect(await h.store.access.getStaffSession('b'.repeat(64))).not.toBeNull();
    expect(await h.store.access.getStaffSession('c'.repeat(64))).not.toBeNull();
    // Again: nothing more is due.
    expect(await site.staff.prune()).toEqual({ audit: 0, sessions: 0 });
  });
});
