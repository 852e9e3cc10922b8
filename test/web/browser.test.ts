// The landing page in a real headless Chromium: subscribe buttons with the right links, the copyable URL,
// and a visible QR code.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/web/server.ts';
import { type Harness, startHarness } from '../feeds/harness.ts';
import { type Browser, launchBrowser } from '../support/browser.ts';

let h: Harness;
let server: RunningServer;
let browser: Browser;
const PUBLIC = 'https://cal.example.org';

beforeAll(async () => {
  h = await startHarness();
  server = await h.serve({ publicUrl: PUBLIC });
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await h?.close();
});

describe('feed landing page in Chromium', () => {
  it('shows the calendar, three kinds of subscribe buttons, the URL and a QR code', async () => {
    const team = h.sandbox.school.teams[0]!;
    const token = (await h.tokens.ensure('hill', 'team', team.id)).token!;
    const page = await browser.newPage({ viewport: { width: 900, height: 1300 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    const res = await page.goto(`${server.url}/feeds/${token}`);
    expect(res?.status()).toBe(200);
    await expect(page.locator('h1').textContent()).resolves.toContain(team.name);

    const feedUrl = `${PUBLIC}/feeds/${token}.ics`;
    const webcal = feedUrl.replace('https://', 'webcal://');
    const href = (kind: string) => page.locator(`a[data-kind="${kind}"]`).getAttribute('href');
    expect(await href('webcal')).toBe(webcal);
    const google = new URL((await href('google'))!);
    expect(google.origin + google.pathname).toBe('https://calendar.google.com/calendar/r');
    expect(google.searchParams.get('cid')).toBe(webcal);
    for (const [kind, origin] of [
      ['outlook-com', 'https://outlook.live.com'],
      ['office365', 'https://outlook.office.com'],
    ] as const) {
      const u = new URL((await href(kind))!);
      expect(u.origin).toBe(origin);
      expect(u.pathname).toBe('/calendar/0/addfromweb');
      expect(u.searchParams.get('url')).toBe(feedUrl);
      expect(u.searchParams.get('name')).toContain(team.name);
    }
    for (const kind of ['webcal', 'google', 'outlook-com', 'office365']) {
      expect(await page.locator(`a[data-kind="${kind}"]`).isVisible(), kind).toBe(true);
    }
    expect(await page.locator('#feed-url').inputValue()).toBe(feedUrl);

    const qr = page.locator('section.qr svg');
    await expect(qr.count()).resolves.toBe(1);
    const box = await qr.boundingBox();
    expect(box!.width).toBeGreaterThan(100);
    expect(box!.height).toBeGreaterThan(100);
    expect(await page.locator('ul.events li').count()).toBeGreaterThan(0);

    // The copy button's script runs under the page's CSP (its hash is allowed).
    await page.locator('button[data-copy]').click();
    // The label changes when the clipboard's promise settles, a moment after the click.
    await expect
      .poll(() => page.locator('button[data-copy]').textContent(), { timeout: 15_000 })
      .toBe('Copied');
    expect(errors).toEqual([]);

    await page.screenshot({ path: '/tmp/rostercal-landing.png', fullPage: true });
    await page.close();
  });

  it('says "Not copied" when the browser refuses both ways to copy, and leaves the address selected', async () => {
    const team = h.sandbox.school.teams[0]!;
    const token = (await h.tokens.ensure('hill', 'team', team.id)).token!;
    const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
    // A browser that refuses: the clipboard API rejects (no permission) and the old command copies nothing.
    await page.addInitScript(`
      Object.defineProperty(navigator, 'clipboard', {
        value: { writeText: () => Promise.reject(new Error('refused')) },
      });
      document.execCommand = () => false;
    `);
    await page.goto(`${server.url}/feeds/${token}`);
    await page.locator('button[data-copy]').click();
    await expect
      .poll(() => page.locator('button[data-copy]').textContent(), { timeout: 15_000 })
      .toBe('Not copied: copy it by hand');
    const selected = await page.evaluate(
      '(({ value, selectionStart, selectionEnd }) => value.slice(selectionStart, selectionEnd))(document.getElementById("feed-url"))',
    );
    expect(selected).toBe(`${PUBLIC}/feeds/${token}.ics`);
    await page.close();
  });
});
