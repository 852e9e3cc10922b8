// The whole sign-in in a real Chromium at phone width (390 px): a coach opens /staff, is sent through the
// school's identity provider (a real OpenID provider, code + PKCE), picks themselves, lands on "My teams" with
// exactly their teams, and taps the next session's attendance sheet: a PDF, audited. No sideways scrolling and
// tap targets of at least 44 px on every page of the way.
import { readFile } from 'node:fs/promises';
import type { Response } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StaffUser } from '../../src/domain/types.ts';
import { staffAccess } from '../../src/identity/roles.ts';
import { type Harness, startHarness } from '../feeds/harness.ts';
import { type Browser, launchBrowser, type Page } from '../support/browser.ts';
import { expectPdf } from '../support/pdf.ts';
import { expectPhoneFriendly } from '../support/phone.ts';
import { freePort } from '../support/ports.ts';
import { type StaffSite, startStaffSite, startTestIdp, type TestIdp } from './harness.ts';

let h: Harness;
let idp: TestIdp;
let site: StaffSite;
let browser: Browser;
const LAN_HOST = 'rostercal.school.lan';
let coach: StaffUser;
let other: StaffUser;

beforeAll(async () => {
  h = await startHarness();
  const teams = await h.store.records.list('hill', 'teams');
  const coaches = (await h.store.records.list('hill', 'staff')).filter(
    (s) =>
      s.email && !s.frozen && !s.isAdmin && !s.isManager && staffAccess(s, teams).assignedTeamIds.size > 0,
  );
  [coach, other] = coaches as unknown as [StaffUser, StaffUser];
  expect(other, 'the sandbox school has two coaches with teams').toBeDefined();
  const port = await freePort();
  idp = await startTestIdp(
    [coach, other].map((u) => ({
      id: String(u.id),
      email: u.email!,
      name: `${u.firstName} ${u.lastName}`,
      role: 'staff' as const,
      note: 'coach',
    })),
    `http://127.0.0.1:${port}/auth/callback`,
  );
  site = await startStaffSite(h, { port, idp });
  // A school's LAN name, resolved by Chromium alone (no DNS, no /etc/hosts): for sign-in over plain http.
  browser = await launchBrowser({ args: [`--host-resolver-rules=MAP ${LAN_HOST} 127.0.0.1`] });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await site?.close();
  await idp?.close();
  await h?.close();
});

describe('a coach on a phone (Chromium, 390 px)', () => {
  it('signs in with the school’s provider, sees exactly their teams, and prints the next attendance sheet in 3 taps', async () => {
    const context = await browser.newContext({
      viewport: { width: 390, height: 844 },
      isMobile: true,
      hasTouch: true,
      deviceScaleFactor: 2,
      acceptDownloads: true,
    });
    const page = await context.newPage();
    const refused: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) refused.push(m.text());
    });
    let taps = 0;

    // Opening /staff signed out goes straight to the provider's sign-in page (no page of our own in between).
    await page.goto(`${site.url}/staff`);
    expect(page.url()).toMatch(new RegExp(`^${idp.issuer}/interaction/`));
    await expectPhoneFriendly(page);
    // Its stylesheet applies under its CSP (allowed by hash, no 'unsafe-inline'): one wide button per person.
    await expect(
      page.evaluate('getComputedStyle(document.querySelector("ul.people button")).display'),
    ).resolves.toBe('grid');
    expect(refused).toEqual([]);

    const name = `${coach.firstName} ${coach.lastName}`;
    await Promise.all([
      page.waitForURL(`${site.url}/staff`),
      page
        .locator('button', { hasText: name })
        .tap()
        .then(() => taps++),
    ]);
    await expectPhoneFriendly(page);

    const teams = await h.store.records.list('hill', 'teams');
    const access = staffAccess(coach, teams);
    const expected = teams
      .filter((t) => access.teamIds.has(t.id) && (!t.hidden || access.assignedTeamIds.has(t.id)))
      .map((t) => t.id)
      .sort((a, b) => a - b);
    const shown = (await page.locator('section[id^="team-"]').evaluateAll((els) => els.map((e) => e.id)))
      .map((id) => Number(id.slice('team-'.length)))
      .sort((a, b) => a - b);
    expect(shown).toEqual(expected);
    expect(shown).not.toContain(
      teams.find((t) => !access.teamIds.has(t.id) && t.staff.some((s) => s.id === other.id))?.id,
    );

    // The first attendance sheet on the page is the coach's next session that is not cancelled ("Today and next").
    const sheet = page.locator('#next a', { hasText: 'Attendance sheet' }).first();
    const href = (await sheet.getAttribute('href'))!;
    const link = new URL(href, site.url);
    const teamId = Number(/\/rosters\/teams\/(\d+)\.pdf/.exec(link.pathname)![1]);
    const sessionId = Number(link.searchParams.get('session'));
    expect(access.teamIds.has(teamId)).toBe(true);
    const session = await h.store.records.get('hill', 'sessions', sessionId);
    expect(session?.status).not.toBe('cancelled');

    const download = page.waitForEvent('download', { timeout: 30_000 }).catch(() => null);
    const response = page.waitForResponse((r) => r.url().includes('/rosters/teams/'), { timeout: 30_000 });
    await sheet.tap();
    taps++;
    const served = await response;
    expect(served.status()).toBe(200);
    expect(served.headers()['content-type']).toBe('application/pdf');
    // Chromium shows the PDF inline, or headless saves it as a download: either way, the bytes are a PDF.
    const got = await Promise.race([download, served.body().catch(() => null)]);
    const bytes = got === null ? null : Buffer.isBuffer(got) ? got : await readFile((await got.path())!);
    expectPdf(bytes);
    // Sign-in (one tap at the provider) and the sheet: within the three taps the issue allows.
    expect(taps).toBeLessThanOrEqual(3);

    const [record] = await h.store.access.listAudit({ actor: coach.email!, action: 'roster' });
    expect(record).toMatchObject({ teamId, sessionId, template: 'attendance-sheet', schoolId: 'hill' });
    await context.close();
  });
});

describe('signing out in Chromium (desktop, 1280 px)', () => {
  // Chromium sends `Origin: null` with a form posted from a page whose Referrer-Policy is no-referrer (ours):
  // the Sign out button must still end the session, and the old cookie must be refused afterwards.
  it('the Sign out button ends the session and the old cookie no longer opens My teams', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${site.url}/staff`);
    await Promise.all([
      page.waitForURL(`${site.url}/staff`),
      page.locator('button', { hasText: `${coach.firstName} ${coach.lastName}` }).click(),
    ]);
    const [old] = (await context.cookies(site.url)).filter((c) => c.name === 'rostercal_session');
    expect(old, 'a session cookie after sign-in').toBeDefined();
    const cookie = `${old!.name}=${old!.value}`;
    expect((await fetch(`${site.url}/staff`, { headers: { cookie }, redirect: 'manual' })).status).toBe(200);

    await Promise.all([
      page.waitForURL(`${site.url}/auth/signed-out`, { timeout: 10_000 }),
      page.locator('button', { hasText: 'Sign out' }).click(),
    ]);
    expect(await page.locator('main').innerText()).toContain('You are signed out');
    const after = await fetch(`${site.url}/staff`, { headers: { cookie }, redirect: 'manual' });
    expect(after.status).not.toBe(200);
    await context.close();
  });
});

describe('the demo provider when a visitor strays (Chromium, 390 px)', () => {
  async function phonePage() {
    const context = await browser.newContext({
      viewport: { width: 390, height: 844 },
      isMobile: true,
      hasTouch: true,
      deviceScaleFactor: 2,
    });
    const page = await context.newPage();
    const refused: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) refused.push(m.text());
    });
    return { context, page, refused };
  }

  /** The provider's own error page: the staff layout, a 4xx, and a way to start again. */
  async function expectErrorPage(page: Page, response: Response | null, refused: string[]) {
    expect(response?.status()).toBeGreaterThanOrEqual(400);
    expect(response?.status()).toBeLessThan(500);
    expect(response?.headers()['content-type']).toMatch(/^text\/html/);
    expect(await page.locator('html').getAttribute('lang')).toBeTruthy();
    expect(await page.locator('main h1').innerText()).toBe('Demo sign-in');
    expect(await page.locator('main a', { hasText: 'Start again' }).getAttribute('href')).toBe('/auth/login');
    await expectPhoneFriendly(page);
    expect(refused).toEqual([]);
  }

  it('returning to the picker after signing in (Back, the same link later, another browser): its error page, not "Bad request"', async () => {
    const { context, page, refused } = await phonePage();
    await page.goto(`${site.url}/staff`);
    const picker = page.url();
    expect(picker).toMatch(new RegExp(`^${idp.issuer}/interaction/`));
    await Promise.all([
      page.waitForURL(`${site.url}/staff`),
      page.locator('button', { hasText: `${coach.firstName} ${coach.lastName}` }).tap(),
    ]);
    await expectErrorPage(page, await page.goBack(), refused);
    await expectErrorPage(page, await page.goto(picker), refused);
    const elsewhere = await phonePage();
    await expectErrorPage(elsewhere.page, await elsewhere.page.goto(picker), elsewhere.refused);
    await elsewhere.context.close();
    await context.close();
  });

  it('an account the picker never offered: a 4xx on its error page, not a 500', async () => {
    const { context, page, refused } = await phonePage();
    await page.goto(`${site.url}/staff`);
    const form = page.locator('form', { hasText: `${coach.firstName} ${coach.lastName}` });
    await form.locator('input[name="account"]').evaluate((input) => {
      (input as unknown as { value: string }).value = 'nobody-at-all';
    });
    const [response] = await Promise.all([page.waitForNavigation(), form.locator('button').tap()]);
    await expectErrorPage(page, response, refused);
    await context.close();
  });

  it('its discovery names no logout page, and /session/end serves no page the CSP must refuse', async () => {
    // rostercal signs out on its own (/auth/logout); oidc-provider's logout page runs an inline script.
    const discovery = (await (
      await fetch(`${idp.issuer}/.well-known/openid-configuration`)
    ).json()) as Record<string, unknown>;
    expect(discovery.end_session_endpoint).toBeUndefined();
    const { context, page, refused } = await phonePage();
    const response = await page.goto(`${idp.issuer}/session/end`);
    expect(response?.status()).toBe(404);
    expect(refused).toEqual([]);
    await context.close();
  });
});

describe('plain http on a LAN name (PUBLIC_URL http://rostercal.school.lan:PORT)', () => {
  let lanIdp: TestIdp;
  let lanSite: StaffSite;
  let lan: string;
  beforeAll(async () => {
    const port = await freePort();
    lan = `http://${LAN_HOST}:${port}`;
    lanIdp = await startTestIdp(
      [
        {
          id: String(coach.id),
          email: coach.email!,
          name: `${coach.firstName} ${coach.lastName}`,
          role: 'staff',
          note: '',
        },
      ],
      `${lan}/auth/callback`,
    );
    lanSite = await startStaffSite(h, { port, idp: lanIdp, publicUrl: lan });
  });
  afterAll(async () => {
    await lanSite?.close();
    await lanIdp?.close();
  });

  it('sign-in works: the session cookie is not Secure, so the browser keeps it over http', async () => {
    const context = await browser.newContext({
      viewport: { width: 390, height: 844 },
      isMobile: true,
      hasTouch: true,
    });
    const page = await context.newPage();
    await page.goto(`${lan}/staff`);
    await Promise.all([
      page.waitForURL(`${lan}/staff`),
      page.locator('button', { hasText: `${coach.firstName} ${coach.lastName}` }).tap(),
    ]);
    expect(await page.locator('section[id^="team-"]').count()).toBeGreaterThan(0);
    const [cookie] = (await context.cookies(lan)).filter((c) => c.name === 'rostercal_session');
    expect(cookie).toMatchObject({ secure: false, httpOnly: true, sameSite: 'Lax' });
    await context.close();
  });

  it('opened at another address than PUBLIC_URL, sign-in says exactly why it cannot work there (no loop)', async () => {
    const context = await browser.newContext({
      viewport: { width: 390, height: 844 },
      isMobile: true,
      hasTouch: true,
    });
    const page = await context.newPage();
    const other = lanSite.url; // http://127.0.0.1:PORT: the same server under another name
    const res = await page.goto(`${other}/staff`);
    expect(res?.status()).toBe(400);
    const text = await page.locator('main').innerText();
    expect(text).toContain(
      `You opened rostercal at ${other}, but it is set up to be used at ${lan} (PUBLIC_URL)`,
    );
    expect(text).toContain(`${lan}/auth/callback`);
    await expectPhoneFriendly(page);
    // Its button continues at the right address, and sign-in then works.
    await page.locator('a', { hasText: `Continue at ${LAN_HOST}` }).tap();
    await page.waitForURL(new RegExp(`^${lanIdp.issuer}/interaction/`));
    await context.close();
  });
});
