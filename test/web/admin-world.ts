// An admin in Chromium: a pulled sandbox school, the staff site with ADMIN_TOKEN, and browsers signed in through
// /admin/login (break-glass access) at a phone's or a desktop's size. Shared by the admin pages' browser tests.
import { type Harness, startHarness } from '../feeds/harness.ts';
import { type StaffSite, startStaffSite } from '../identity/harness.ts';
import { type Browser, type BrowserContext, launchBrowser, type Page } from '../support/browser.ts';
import { freePort } from '../support/ports.ts';

export const PHONE = {
  viewport: { width: 390, height: 844 },
  isMobile: true,
  hasTouch: true,
  deviceScaleFactor: 2,
};
export const DESKTOP = { viewport: { width: 1280, height: 900 } };

export interface AdminWorld {
  h: Harness;
  site: StaffSite;
  /** A new browser context signed in as the admin token, on /admin. */
  signedIn(device: typeof PHONE | typeof DESKTOP): Promise<Page>;
  close(): Promise<void>;
}

export async function startAdminWorld(token: string): Promise<AdminWorld> {
  const h = await startHarness({ now: '2026-11-02T09:00:00Z' });
  const site = await startStaffSite(h, { port: await freePort(), idp: null, adminToken: token });
  const browser: Browser = await launchBrowser();
  const contexts: BrowserContext[] = [];
  return {
    h,
    site,
    async signedIn(device) {
      const context = await browser.newContext(device);
      contexts.push(context);
      const page = await context.newPage();
      await page.goto(`${site.url}/admin/login`);
      await page.fill('#token', token);
      await Promise.all([page.waitForURL(`${site.url}/admin`), page.click('button[type=submit]')]);
      return page;
    },
    async close() {
      for (const c of contexts) await c.close();
      await browser.close();
      await site.close();
      await h.close();
    },
  };
}
