// What every page a phone opens must satisfy, checked in Chromium: no sideways scrolling, tap targets of at
// least 44 × 44 CSS px (the landing page, the family page, staff sign-in and "My teams").
import { expect } from 'vitest';
import type { Page } from './browser.ts';

/** No horizontal scrolling, and every visible control at least 44 × 44 CSS px. */
export async function expectPhoneFriendly(page: Page): Promise<void> {
  // Expressions as strings: they run in the page (the project's TypeScript has no DOM library).
  const widths = await page.evaluate<{ scroll: number; client: number }>(
    '({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth })',
  );
  expect(widths.scroll, 'horizontal scrolling').toBeLessThanOrEqual(widths.client);
  const small = await page.evaluate<{ what: string; w: number; h: number }[]>(`
    [...document.querySelectorAll('a, button, select, input:not([type=hidden]), textarea')]
      .map((el) => {
        const r = el.getBoundingClientRect();
        return { what: el.tagName + ' ' + (el.textContent || '').trim().slice(0, 40), w: r.width, h: r.height };
      })
      .filter((x) => x.w > 0 && x.h > 0 && (x.w < 44 || x.h < 44))`);
  expect(small, 'tap targets under 44 px').toEqual([]);
}
