// The new-link page's Copy buttons in Chromium at 390 px and 1280 px (an outside tester, stop 53: at 390 px the
// "Copied" that answers a tap sat out of line with the button that made it). What is said must sit beside its
// button, centred on it, inside the card. Screenshots: /tmp/rostercal-admin-copy-*.png.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AdminWorld, DESKTOP, PHONE, startAdminWorld } from './admin-world.ts';

const ADMIN = 'admin-copy-test-token-0123456789abcdefghij';
let world: AdminWorld;

beforeAll(async () => {
  world = await startAdminWorld(ADMIN);
}, 180_000);
afterAll(async () => {
  await world?.close();
});

describe('the new link page', () => {
  for (const [name, device] of [
    ['390', PHONE],
    ['1280', DESKTOP],
  ] as const) {
    it(`at ${name} px: "Copied" is said beside the Copy button tapped, on its line, inside the card`, async () => {
      const page = await world.signedIn(device);
      await page
        .context()
        .grantPermissions(['clipboard-read', 'clipboard-write'], { origin: world.site.url });
      const team = (await world.h.store.records.list('hill', 'teams'))[0]!;
      await page.goto(`${world.site.url}/admin/feeds/rotate?school=hill&scope=team&id=${team.id}`);
      await Promise.all([
        page.waitForURL(/\/admin\/feeds\/rotated/),
        page.click('form[action="/admin/feeds/rotate"] button'),
      ]);
      for (const field of ['page', 'message']) {
        const button = page.locator(`button[data-copy="${field}"]`);
        if ((await button.count()) === 0) continue;
        await button.click();
        const said = page.locator(`#${field}-copied`);
        await expect.poll(() => said.textContent()).toBe('Copied');
        const b = (await button.boundingBox())!;
        // The words' own line box: a stretched flex item's box is the button's height whatever its text does.
        const s = await page.evaluate<{ x: number; y: number; width: number; height: number }>(`(() => {
          const r = document.createRange();
          r.selectNodeContents(document.getElementById('${field}-copied'));
          const { x, y, width, height } = r.getClientRects()[0];
          return { x, y, width, height };
        })()`);
        const card = (await page.locator('.card').first().boundingBox())!;
        await page.screenshot({ path: `/tmp/rostercal-admin-copy-${name}.png`, fullPage: true });
        const where = JSON.stringify({ field, button: b, said: s, card });
        // On the button's line, its middle within 2 px of the button's.
        expect(Math.abs(s.y + s.height / 2 - (b.y + b.height / 2)), where).toBeLessThanOrEqual(2);
        // Beside it, after it, and inside the card.
        expect(s.x, where).toBeGreaterThanOrEqual(b.x + b.width);
        expect(s.x + s.width, where).toBeLessThanOrEqual(card.x + card.width);
      }
    });
  }
});
