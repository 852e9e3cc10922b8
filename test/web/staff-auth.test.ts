// Staff access put together (web/staff-auth.ts: createStaffAuth, forbidden) on an app of its own over HTTP, with
// a real OpenID provider, real staff sessions and directory on the sandbox's school pulled into a real SQLite store:
// refusal pages name whom to ask (HELP_CONTACT, or the school's rostercal administrator) and how soon a change
// upstream arrives (the pull interval); the login cookie is Secure only on an https service; a view's audit record
// is written for a GET, not for a HEAD; forbidden() is a page for a browser and a line for anything else.
import express from 'express';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StaffUser } from '../../src/domain/types.ts';
import type { DemoPerson } from '../../src/identity/demo-people.ts';
import { StaffDirectory } from '../../src/identity/directory.ts';
import { OidcRelyingParty } from '../../src/identity/oidc.ts';
import { StaffSessions } from '../../src/identity/staff-sessions.ts';
import { type RunningServer, startServer } from '../../src/web/server.ts';
import { createStaffAuth, forbidden } from '../../src/web/staff-auth.ts';
import { type Harness, httpCall, startHarness } from '../feeds/harness.ts';
import { browse, CookieJar, signIn, staffPerson, startTestIdp, type TestIdp } from '../identity/harness.ts';
import { freePort } from '../support/ports.ts';

const STRANGER: DemoPerson = {
  id: 'x1',
  email: 'nobody@elsewhere.example',
  name: 'No Body',
  role: 'staff',
  note: '',
};
const HELP = 'the IT office, it@hill.example';

interface AuthSite {
  url: string;
  close(): Promise<void>;
}

let h: Harness;
let coach: StaffUser;
const opened: { close(): Promise<void> }[] = [];

/** createStaffAuth on an app of its own, signing in through a provider of its own, with three routes to try it by. */
async function authSite(opts: { helpContact?: string; pullEveryMinutes?: number; publicUrl?: string } = {}) {
  const port = await freePort();
  const base = opts.publicUrl ?? `http://127.0.0.1:${port}`;
  const idp: TestIdp = await startTestIdp([staffPerson(coach), STRANGER], `${base}/auth/callback`);
  opened.push(idp);
  const log = pino({ level: 'silent' });
  const oidc = new OidcRelyingParty(
    {
      issuer: idp.issuer,
      clientId: idp.clientId,
      clientSecret: idp.clientSecret,
      scopes: [],
      allowedDomains: [],
    },
    { redirectUri: `${base}/auth/callback`, log },
  );
  const auth = createStaffAuth({
    store: h.store,
    sessions: new StaffSessions(h.store, {
      idleMs: 3_600_000,
      maxMs: 86_400_000,
      secure: base.startsWith('https:'),
    }),
    directory: new StaffDirectory(h.store, [{ id: 'hill', name: h.school.name }]),
    oidc,
    adminToken: null,
    publicUrl: base,
    ...(opts.helpContact ? { helpContact: opts.helpContact } : {}),
    ...(opts.pullEveryMinutes ? { pullEveryMinutes: opts.pullEveryMinutes } : {}),
  });
  const app = express();
  app.set('trust proxy', 'loopback');
  app.use(auth.identify, auth.router);
  app.get('/seen', auth.requireStaff, async (req, res) => {
    await auth.auditView(req, res, { action: 'my-teams', schoolId: 'hill' });
    res.send('seen');
  });
  app.get('/admins', auth.requireAdmin, (_req, res) => void res.send('admins'));
  app.get('/refused', (req, res) => forbidden(req, res, 'that roster is not yours'));
  const server: RunningServer = await startServer(app, { port, host: '127.0.0.1' });
  oidc.start();
  const site: AuthSite = {
    url: server.url,
    close: async () => {
      oidc.stop();
      await server.close(500);
    },
  };
  opened.push(site);
  return site;
}

let told: AuthSite;
let plain: AuthSite;

beforeAll(async () => {
  h = await startHarness({ seed: 34 });
  const staff = await h.store.records.list('hill', 'staff');
  coach = staff.find((s) => s.email && !s.frozen && !s.isAdmin && !s.isManager) as unknown as StaffUser;
  told = await authSite({ helpContact: HELP, pullEveryMinutes: 15 });
  plain = await authSite();
}, 120_000);
afterAll(async () => {
  for (const o of opened.reverse()) await o.close();
  await h?.close();
});

describe('refusal pages', () => {
  it('a coach at an administrators’ page: 403 naming whom to ask, HELP_CONTACT or the school’s administrator', async () => {
    for (const [site, ask] of [
      [told, `Ask ${HELP}.`],
      [plain, 'Ask the school’s rostercal administrator (the school office knows who that is).'],
    ] as const) {
      const jar = new CookieJar();
      await signIn(jar, site.url, String(coach.id), '/seen');
      const { res, body } = await browse(jar, `${site.url}/admins`);
      expect(res.status).toBe(403);
      expect(body).toContain(ask);
    }
  });

  it('someone the school does not know: 403 saying how soon a change arrives (the pull interval) and whom to ask', async () => {
    for (const [site, within, ask] of [
      [told, 'within about 15 minutes', HELP],
      [plain, 'within about 10 minutes', 'the school’s rostercal administrator'],
    ] as const) {
      const { res, body } = await signIn(new CookieJar(), site.url, STRANGER.id, '/seen');
      expect(res.status).toBe(403);
      expect(body).toContain('nobody@elsewhere.example');
      expect(body).toContain(within);
      expect(body).toContain(ask);
    }
  });

  it('forbidden(): a page in the staff layout for a browser, a line for anything else', async () => {
    const page = await fetch(`${plain.url}/refused`, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(403);
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(await page.text()).toContain('That roster is not yours.');
    const line = await fetch(`${plain.url}/refused`, { headers: { accept: '*/*' } });
    expect(line.status).toBe(403);
    expect(await line.text()).toBe('that roster is not yours\n');
  });
});

describe('sessions and audit', () => {
  it('the login cookie is Secure only where the service is https', async () => {
    const https = await authSite({ publicUrl: 'https://cal.example.org' });
    // As behind the school's TLS proxy: the address families and staff use, in the Host and X-Forwarded-Proto.
    const cookieOf = async (site: AuthSite, origin: URL) => {
      const r = await httpCall(`${site.url}/auth/login?returnTo=%2Fseen`, {
        headers: { host: origin.host, 'x-forwarded-proto': origin.protocol.slice(0, -1) },
      });
      expect(r.status).toBe(303);
      return (r.headers['set-cookie'] ?? []).join('\n');
    };
    expect(await cookieOf(https, new URL('https://cal.example.org'))).toMatch(/; Secure/);
    expect(await cookieOf(plain, new URL(plain.url))).not.toMatch(/; Secure/);
  });

  it('a view is audited for a GET, never for a HEAD (which shows nothing)', async () => {
    const jar = new CookieJar();
    await signIn(jar, plain.url, String(coach.id), '/seen');
    const count = async () =>
      (await h.store.access.listAudit({ actor: coach.email!, action: 'my-teams' })).length;
    const before = await count();
    expect((await browse(jar, `${plain.url}/seen`)).body).toBe('seen');
    expect((await browse(jar, `${plain.url}/seen`, { method: 'HEAD' })).res.status).toBe(200);
    expect(await count()).toBe(before + 1);
    const [last] = await h.store.access.listAudit({ actor: coach.email!, action: 'my-teams' });
    expect(last).toMatchObject({ schoolId: 'hill', action: 'my-teams' });
  });
});
