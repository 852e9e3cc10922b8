// A report that failed gives its form back (absence-router.ts); an outside tester (stop 54, LOW) found its reason
// box and "Try again" button about 22 px high at 390 px, against 44 px everywhere else on a parent's phone. In
// Chromium at 390 px: the page from a real failed report (the school's system away), phone-friendly, the reason
// as typed in its box. Screenshot: /tmp/rostercal-absence-again-390.png.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, launchBrowser } from '../support/browser.ts';
import { expectPhoneFriendly } from '../support/phone.ts';
import { absenceServer, childWithForm, postForm } from './absence-page.ts';
import { PHONE } from './admin-world.ts';

const w = absenceServer();
let browser: Browser;

beforeAll(async () => {
  browser = await launchBrowser();
}, 60_000);
afterAll(async () => {
  await browser?.close();
});

describe('the failed report page', () => {
  it('at 390 px: its form again, controls of 44 px, the reason kept', async () => {
    const { form } = await childWithForm(w.h, w.server.url);
    await w.h.sandbox.close();
    const failed = await postForm(w.server.url, form.action, form.cookie, {
      csrf: form.csrf,
      session: form.session,
      student: form.student,
      reason: 'Dentist at 4',
    });
    expect(failed.status).toBe(503);
    // The page as the server sent it, headers (its CSP, which allows its style by hash) and all.
    const context = await browser.newContext(PHONE);
    const page = await context.newPage();
    const at = `${w.server.url}/failed-report`;
    const headers = Object.fromEntries(
      Object.entries(failed.headers).flatMap(([k, v]) => (typeof v === 'string' ? [[k, v]] : [])),
    );
    await page.route(at, (route) => route.fulfill({ status: 503, headers, body: failed.text }));
    await page.goto(at);
    await expect.poll(() => page.locator('h1').first().textContent()).toContain('not reported');
    await page.screenshot({ path: '/tmp/rostercal-absence-again-390.png', fullPage: true });
    expect(await page.locator('#again-reason').inputValue()).toBe('Dentist at 4');
    await expectPhoneFriendly(page);
    await context.close();
  });
});
