// Staff sign-in in a real browser (headless Chromium): the login form works under the app's security headers
// (whose default CSP forbids forms and styles), sets an HTTP-only cookie, and that cookie opens the rosters.
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSchool } from '../../src/config.ts';
import { openStore, type Store } from '../../src/store/index.ts';
import { createRostersRouter } from '../../src/web/rosters.ts';
import { securityHeaders } from '../../src/web/security.ts';
import { axe } from '../support/axe.ts';
import { type Browser, launchBrowser } from '../support/browser.ts';
import { TEST_NOW } from '../support/clock.ts';
import { expectPdf } from '../support/pdf.ts';
import { sampleFixture, sampleTeam } from './sample-data.ts';

const ADMIN = 'browser-test-admin-token-7f3a9c';
const HOSTILE = 'Training \u001b[2J\u001b]0;pwned\u0007 \u202eevil\u202c\r\nFAKE LINE';
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

let store: Store;
let dir: string;
let browser: Browser;
let server: ReturnType<express.Express['listen']>;
let base: string;

beforeAll(async () => {
  // A store filled by hand: this test is about the browser and the cookie, the pipeline tests cover the data.
  dir = mkdtempSync(join(tmpdir(), 'rostercal-browser-'));
  store = await openStore({ dataDir: dir });
  await store.records.upsertSchool({ id: 'demo', name: 'Browser School', timeZone: 'Europe/London' });
  const team = sampleTeam(12, 77);
  await store.records.upsert('demo', 'teams', [team], TEST_NOW);
  // A training session whose upstream title carries terminal escapes (CSI, OSC with BEL), a bidi override and a
  // line break: the match-day sheet's refusal quotes it.
  await store.records.upsert(
    'demo',
    'sessions',
    [{ ...sampleFixture(team), id: 9002, scored: false, opponent: null, title: HOSTILE }],
    TEST_NOW,
  );
  const school = parseSchool({
    id: 'demo',
    name: 'Browser School',
    upstream: { url: 'http://127.0.0.1:9/', token: 'unused' },
    timeZone: 'Europe/London',
  });
  const app = express();
  app.use(securityHeaders({ hsts: false }));
  // The sessions are the week of TEST_NOW: on the real clock the fixture's sheet was refused as too old (404) from
  // 60 days after it, before the refusal this test is about.
  app.use(
    createRostersRouter({
      store,
      config: { schools: [school] },
      adminToken: ADMIN,
      now: () => new Date(TEST_NOW),
    }),
  );
  await new Promise<void>((resolve) => {
    server = app.listen(0, '127.0.0.1', () => resolve());
  });
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await store?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('staff sign-in in Chromium', () => {
  it('refuses the roster, then signs in through the form and serves it', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const target = '/rosters/teams/77.pdf';
    const refused = await page.request.get(base + target);
    expect(refused.status()).toBe(401);

    const violations: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
    });
    await page.goto(`${base}/admin/login?next=${encodeURIComponent(target)}`);
    // The page's own style applies (the CSP allows exactly it).
    const background = await page.evaluate('getComputedStyle(document.body).backgroundColor');
    expect(background).toBe('rgb(244, 245, 247)');

    await page.fill('#token', 'not-the-token');
    await Promise.all([page.waitForLoadState('load'), page.click('button[type=submit]')]);
    expect(await page.textContent('[role=alert]')).toContain('not right');
    expect(await context.cookies()).toHaveLength(0);

    await page.fill('#token', ADMIN);
    // The redirect after sign-in lands on the roster itself.
    const [landed] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith(target)),
      page.click('button[type=submit]', { noWaitAfter: true }),
    ]);
    expect(landed.status()).toBe(200);
    expect(violations).toEqual([]);
    const cookies = await context.cookies();
    expect(cookies).toHaveLength(1);
    expect(cookies[0]).toMatchObject({
      name: '__Host-rostercal_session',
      httpOnly: true,
      secure: true,
      sameSite: 'Lax',
    });
    const served = await page.request.get(base + target);
    expect(served.status()).toBe(200);
    expect(served.headers()['content-type']).toBe('application/pdf');
    expectPdf(await served.body());
    await context.close();
  });

  it('a refusal is a page in the staff layout, its upstream words cleaned as the CLI cleans them (issue 42)', async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 800 } });
    const page = await context.newPage();
    await page.goto(`${base}/admin/login`);
    await page.fill('#token', ADMIN);
    await Promise.all([page.waitForLoadState('load'), page.click('button[type=submit]')]);
    const refusal = `${base}/rosters/teams/77.pdf?session=9002&template=match-day-sheet`;
    for (const width of [390, 1280]) {
      await page.setViewportSize({ width, height: 800 });
      const res = await page.goto(refusal);
      expect(res!.status()).toBe(400);
      expect(res!.headers()['content-type']).toMatch(/^text\/html/);
      expect(await page.getAttribute('html', 'lang')).toBe('en');
      expect(await page.title()).not.toBe('');
      expect(await page.locator('h1').count()).toBe(1);
      expect(await page.locator('main').count()).toBe(1);
      const text = await page.textContent('main');
      expect(text).toContain('is not a fixture');
      expect(text).not.toMatch(CONTROLS);
      const found = await axe(page);
      expect(found.violations, `axe at ${width} px`).toEqual([]);
      const scroll = await page.evaluate<number>('document.documentElement.scrollWidth');
      expect(scroll).toBeLessThanOrEqual(width);
    }
    // A script (curl: Accept */*) gets one line of text, cleaned the same way.
    const plain = await page.request.get(refusal, { headers: { accept: '*/*' } });
    expect(plain.status()).toBe(400);
    expect(plain.headers()['content-type']).toMatch(/^text\/plain/);
    const body = await plain.text();
    expect(body).toContain('is not a fixture');
    expect(body.trimEnd()).not.toMatch(CONTROLS);
    expect(body.trimEnd().split('\n')).toHaveLength(1);
    await context.close();
  });
});
