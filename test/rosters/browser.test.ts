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
import { type Browser, launchBrowser } from '../support/browser.ts';
import { sampleTeam } from './sample-data.ts';

const ADMIN = 'browser-test-admin-token-7f3a9c';

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
  await store.records.upsert('demo', 'teams', [sampleTeam(12, 77)], '2026-11-20T00:00:00.000Z');
  const school = parseSchool({
    id: 'demo',
    name: 'Browser School',
    upstream: { url: 'http://127.0.0.1:9/', token: 'unused' },
    timeZone: 'Europe/London',
  });
  const app = express();
  app.use(securityHeaders({ hsts: false }));
  app.use(createRostersRouter({ store, config: { schools: [school] }, adminToken: ADMIN }));
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
    expect((await served.body()).subarray(0, 5).toString()).toBe('%PDF-');
    await context.close();
  });
});
