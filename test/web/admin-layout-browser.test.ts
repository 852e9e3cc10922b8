// What an outside tester found on /admin in Chromium, at 390 px and 1280 px: the "Earlier runs (7)" toggle sat
// below the rows it opens (they appeared above the place just tapped), and the header's name sat higher than its
// "Sign out". Screenshots: /tmp/rostercal-admin-layout-*.png.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from '../support/browser.ts';
import { type AdminWorld, DESKTOP, PHONE, startAdminWorld } from './admin-world.ts';

const ADMIN = 'admin-layout-test-token-0123456789abcdef';
let world: AdminWorld;

beforeAll(async () => {
  world = await startAdminWorld(ADMIN);
  // Ten runs, as the demo has after a few minutes: three shown, seven behind "Earlier runs (7)".
  while ((await world.h.store.runs.listRuns('hill', { limit: 10 })).length < 10)
    await world.h.pull('incremental');
}, 180_000);
afterAll(async () => {
  await world?.close();
});

/** Top of the "Earlier runs" summary and of the first earlier row, once opened. */
async function toggleAndRows(page: Page): Promise<{ summary: number; firstRow: number }> {
  const summary = page.locator('summary', { hasText: 'Earlier runs' }).first();
  await summary.click();
  const row = page.locator('tbody.earlier tr').first();
  return { summary: (await summary.boundingBox())!.y, firstRow: (await row.boundingBox())!.y };
}

/** The text baselines (bottom of the first line box) of the header's name and of its Sign out button's label. */
async function baselines(page: Page): Promise<{ who: number; signOut: number }> {
  return page.evaluate<{ who: number; signOut: number }>(`(() => {
    const bottom = (el) => { const r = document.createRange(); r.selectNodeContents(el); return r.getClientRects()[0].bottom; };
    return { who: bottom(document.querySelector('header .who')), signOut: bottom(document.querySelector('header form button')) };
  })()`);
}

describe('/admin layout', () => {
  for (const [name, device] of [
    ['390', PHONE],
    ['1280', DESKTOP],
  ] as const) {
    it(`at ${name} px: the Earlier runs toggle sits above the rows it opens; name and Sign out on one baseline`, async () => {
      const page = await world.signedIn(device);
      const b = await baselines(page);
      expect(Math.abs(b.who - b.signOut), JSON.stringify(b)).toBeLessThanOrEqual(1);
      const t = await toggleAndRows(page);
      await page.screenshot({ path: `/tmp/rostercal-admin-layout-${name}.png`, fullPage: true });
      expect(t.summary, JSON.stringify(t)).toBeLessThan(t.firstRow);
    });
  }
});
