// The admin pages as school IT uses them, in Chromium on a phone (390 px) and a desktop (1280 px): no sideways
// scrolling, tap targets of 44 px, the staff pages' look; a feed's new link asks first (naming the calendar and
// what happens to families), then gives the page to send them, and the audit log shows it in the school's time
// with the team's name.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Harness } from '../feeds/harness.ts';
import type { StaffSite } from '../identity/harness.ts';
import { rotateAsAdmin } from '../support/admin-rotation.ts';
import { axe } from '../support/axe.ts';
import type { Page } from '../support/browser.ts';
import { expectPhoneFriendly } from '../support/phone.ts';
import { type AdminWorld, DESKTOP, PHONE, startAdminWorld } from './admin-world.ts';

const ADMIN = 'admin-browser-test-token-0123456789abcdef';

let world: AdminWorld;
let h: Harness;
let site: StaffSite;
const signedIn = (device: typeof PHONE | typeof DESKTOP) => world.signedIn(device);

beforeAll(async () => {
  world = await startAdminWorld(ADMIN);
  ({ h, site } = world);
}, 120_000);

afterAll(async () => {
  await world?.close();
});

/** Every <details> opened, so that what it holds is measured too. */
const openAll = (page: Page) =>
  page.evaluate('document.querySelectorAll("details").forEach((d) => { d.open = true; })');

/** The staff pages' look: their header bar and card style, not the browser's defaults. */
async function expectStaffStyle(page: Page): Promise<void> {
  const header = await page.evaluate<string>(
    'getComputedStyle(document.querySelector("header")).backgroundColor',
  );
  expect(header).toBe('rgb(31, 58, 95)');
  expect(await page.locator('main .card').count()).toBeGreaterThan(0);
}

/** Words that no line break cuts in two: every single-word cell's text lies on one line. */
async function brokenWords(page: Page): Promise<string[]> {
  return page.evaluate<string[]>(`
    [...document.querySelectorAll('td')].filter((td) => {
      const text = td.textContent.trim();
      if (!text || /\\s/.test(text)) return false;
      const range = document.createRange();
      range.selectNodeContents(td);
      return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size > 1;
    }).map((td) => td.textContent.trim())`);
}

describe('/admin', () => {
  it('on a phone: no sideways scrolling, every control 44 px, styled like /staff', async () => {
    const page = await signedIn(PHONE);
    await openAll(page);
    await expectPhoneFriendly(page);
    await expectStaffStyle(page);
    await expect(page.locator('h2').first().textContent()).resolves.toContain('Hillcrest College');
    await page.screenshot({ path: '/tmp/rostercal-admin-390.png', fullPage: true });
  });

  it('on a phone, as it opens: short enough to use, the search first, the rest a tap away', async () => {
    // A school that has run a while: ten runs to list, as the demo has after a few minutes.
    while ((await h.store.runs.listRuns('hill', { limit: 10 })).length < 10) await h.pull('incremental');
    const page = await signedIn(PHONE);
    await expectPhoneFriendly(page);
    const height = await page.evaluate<number>('document.documentElement.scrollHeight');
    await page.screenshot({ path: '/tmp/rostercal-admin-390-as-opened.png', fullPage: true });
    // Measured: 3,676 px (4.4 screens) with every run a line per field; 1,779 px with the newest three flowing.
    expect(height).toBeLessThanOrEqual(2.5 * PHONE.viewport.height);
    await expect(page.locator('summary', { hasText: 'Earlier runs (7)' }).isVisible()).resolves.toBe(true);
  });

  it('on a desktop: the same page, tables at full width, nothing cut', async () => {
    const page = await signedIn(DESKTOP);
    await openAll(page);
    await expectPhoneFriendly(page);
    expect(await brokenWords(page)).toEqual([]);
    await page.screenshot({ path: '/tmp/rostercal-admin-1280.png', fullPage: true });
  });
});

describe('/admin: the runs of a school', () => {
  /** Left edges of the cells of the newest run and of the oldest (an earlier run, once opened). */
  const columnEdges = (page: Page) =>
    page.evaluate<number[][]>(`(() => {
      const h3 = [...document.querySelectorAll('h3')].find((x) => x.textContent === 'Recent runs');
      const rows = [...h3.parentElement.querySelectorAll('tbody tr')].filter(
        (tr) => h3.compareDocumentPosition(tr) & Node.DOCUMENT_POSITION_FOLLOWING && tr.cells.length === 9,
      );
      const edges = (tr) => [...tr.cells].map((td) => Math.round(td.getBoundingClientRect().left));
      return [edges(rows[0]), edges(rows.at(-1))];
    })()`);

  it('on a desktop, the earlier runs line up with the recent ones, column for column', async () => {
    // Earlier runs unlike the recent ones, as the demo has: a push to a named target that failed, at length.
    const at = (await h.store.runs.listRuns('hill', { limit: 1 }))[0]!.startedAt;
    const push = await h.store.runs.startRun({ schoolId: 'hill', kind: 'push', target: 'google-main', at });
    await h.store.runs.finishRun(push, {
      status: 'failed',
      finishedAt: at,
      counts: { calendars: { added: 12, changed: 3, deleted: 1, skipped: 0, unchanged: 0 } },
      upstreamRequests: 0,
      retries: 2,
      throttled: 1,
      errors: [
        'google-main: calendar for team 3004: 403 rateLimitExceeded (Calendar usage limits exceeded), given up after 4 tries',
      ],
      warning: null,
    });
    for (let i = 0; i < 3; i++) await h.pull('incremental');
    const page = await signedIn(DESKTOP);
    const shown = () => page.locator('tbody.earlier tr:visible').count();
    expect(await shown()).toBe(0);
    await page.locator('summary', { hasText: 'Earlier runs' }).first().click();
    expect(await shown()).toBe((await h.store.runs.listRuns('hill', { limit: 10 })).length - 3);
    expect((await axe(page)).violations).toEqual([]);
    await page.screenshot({ path: '/tmp/screens-admin-runs-1280.png', fullPage: true });
    const [recent, earlier] = await columnEdges(page);
    expect(recent!.length).toBe(9);
    expect(earlier).toEqual(recent);
    await expectPhoneFriendly(page);
    expect(await brokenWords(page)).toEqual([]);
  });

  it('on a phone, the earlier runs open below the recent ones, no sideways scrolling', async () => {
    const page = await signedIn(PHONE);
    await page.locator('summary', { hasText: 'Earlier runs' }).first().tap();
    await expectPhoneFriendly(page);
    expect((await axe(page)).violations).toEqual([]);
    await page.screenshot({ path: '/tmp/screens-admin-runs-390.png', fullPage: true });
  });
});

describe('/admin: the cards', () => {
  it('start their text at their padding, not a blank line further down (a paragraph’s or heading’s own margin)', async () => {
    const page = await signedIn(DESKTOP);
    const gaps = await page.evaluate<{ what: string; top: number; bottom: number }[]>(`
      [...document.querySelectorAll('main .card')].filter((c) => c.firstElementChild).map((c) => {
        const box = c.getBoundingClientRect();
        const first = c.firstElementChild.getBoundingClientRect();
        const last = c.lastElementChild.getBoundingClientRect();
        return { what: c.textContent.trim().slice(0, 30), top: Math.round(first.top - box.top), bottom: Math.round(box.bottom - last.bottom) };
      })`);
    expect(gaps.length).toBeGreaterThan(2);
    // 16 px of padding on every side: measured 32 above "Your address as this service sees it" and "Calendars".
    expect(gaps.filter((g) => g.top > 17 || g.bottom > 17)).toEqual([]);
  });
});

describe('a new link for a team calendar', () => {
  it('asks first, naming the team and what happens to families; then gives the page to send and audits it', async () => {
    const page = await signedIn(PHONE);
    const team = (await h.store.records.list('hill', 'teams')).sort((a, b) =>
      a.name.localeCompare(b.name),
    )[0]!;
    const old = (await h.tokens.ensure('hill', 'team', team.id)).token!;
    // Found with /admin's search box; its "New link…" is named for the calendar.
    await page.fill('#q', team.name);
    await Promise.all([page.waitForURL(/\/admin\/search\?/), page.locator('form[role=search] button').tap()]);
    await Promise.all([
      page.waitForURL(/\/admin\/feeds\/rotate\?/),
      page.getByRole('link', { name: `New link… for ${team.name} · Hillcrest College` }).tap(),
    ]);

    // The question, on its own page: nothing has changed yet.
    await expect(page.locator('h1').textContent()).resolves.toContain(team.name);
    const question = (await page.locator('main').textContent()) ?? '';
    expect(question).toContain('The current link stops working at once');
    expect(question).toContain(`the families of the ${team.students.length} students of ${team.name}`);
    expect(question).toMatch(/cancellations, new sessions and changed times no longer reach them/);
    await expectPhoneFriendly(page);
    await page.screenshot({ path: '/tmp/rostercal-admin-rotate-confirm-390.png', fullPage: true });
    expect((await fetch(`${site.url}/feeds/${old}.ics`)).status).toBe(200);

    await Promise.all([
      page.waitForURL(/\/admin\/feeds\/rotated\?/),
      page.locator('button', { hasText: 'Stop the old link and make a new one' }).tap(),
    ]);
    await expect(page.locator('h1').textContent()).resolves.toContain(`New link for “${team.name}`);
    const sent = await page.locator('#page').inputValue();
    expect(sent).toMatch(new RegExp(`^${site.url.replace(/[.:/]/g, '\\$&')}/feeds/[\\w-]{32}$`));
    expect(sent).not.toContain(old);
    expect(await page.locator('#message').inputValue()).toContain(sent);
    await expectPhoneFriendly(page);
    await page.screenshot({ path: '/tmp/rostercal-admin-rotated-390.png', fullPage: true });
    // The old token is revoked in the store. (How soon a serving process stops answering it is the feed-token
    // cache's business: test/feeds.)
    const resolved = await h.tokens.resolve(old);
    expect(resolved).toBeNull();
    expect((await fetch(`${sent}.ics`)).status).toBe(200);

    // Reloading the result shows the same link: it does not rotate again.
    await page.reload();
    expect(await page.locator('#page').inputValue()).toBe(sent);
    expect((await fetch(`${sent}.ics`)).status).toBe(200);

    const records = await h.store.access.listAudit({ teamId: team.id, limit: 10 });
    const rotations = records.filter((r) => r.action === 'feed-rotate');
    expect(rotations).toHaveLength(1);
    expect(rotations[0]!.actor).toBe('admin token');
    expect(rotations[0]!.detail).toContain(team.name);
  });

  it('the new link: selectable text without script; with it, a Copy button that copies it and says "Copied"', async () => {
    const team = (await h.store.records.list('hill', 'teams')).sort((a, b) =>
      a.name.localeCompare(b.name),
    )[1]!;
    const rotated = await rotateAsAdmin(site.url, ADMIN, { school: 'hill', scope: 'team', id: team.id });
    expect(rotated.res.status).toBe(200);
    const url = rotated.res.url.replace(/^https?:\/\/[^/]+/, site.url);
    const sent = `${site.url}/feeds/${rotated.token}`;

    const page = await signedIn(PHONE);
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: site.url });
    await page.goto(url);
    const copy = page.getByRole('button', { name: 'Copy the page to send' });
    await expect(copy.isVisible()).resolves.toBe(true);
    await copy.tap();
    // Said when the clipboard's promise settles, a moment after the tap.
    await expect.poll(() => page.locator('#page-copied').textContent(), { timeout: 15_000 }).toBe('Copied');
    await expect(page.evaluate<string>('navigator.clipboard.readText()')).resolves.toBe(sent);
    await page.getByRole('button', { name: 'Copy the message' }).tap();
    // Said when the clipboard's promise settles, a moment after the tap.
    await expect
      .poll(() => page.locator('#message-copied').textContent(), { timeout: 15_000 })
      .toBe('Copied');
    await expect(page.evaluate<string>('navigator.clipboard.readText()')).resolves.toContain(sent);
    await expectPhoneFriendly(page);
    await page.screenshot({ path: '/tmp/rostercal-admin-rotated-copy-390.png', fullPage: true });

    // Without script: the link is there to select, and no button that would do nothing.
    const plain = await world.signedIn({ ...DESKTOP, javaScriptEnabled: false } as typeof DESKTOP);
    await plain.goto(url);
    expect(await plain.locator('#page').inputValue()).toBe(sent);
    expect(await plain.getByRole('button', { name: 'Copy the page to send' }).isVisible()).toBe(false);
  });

  it('a form from elsewhere (no CSRF token) rotates nothing', async () => {
    const page = await signedIn(DESKTOP);
    const team = (await h.store.records.list('hill', 'teams'))[1]!;
    const old = (await h.tokens.ensure('hill', 'team', team.id)).token!;
    // The browser's own cookies (page.request shares them), posted without the form's token.
    const res = await page.request.post(`${site.url}/admin/feeds/rotate`, {
      form: { school: 'hill', scope: 'team', id: String(team.id) },
    });
    expect(res.status()).toBe(403);
    expect((await fetch(`${site.url}/feeds/${old}.ics`)).status).toBe(200);
  });
});

describe('/admin/audit', () => {
  it('on a desktop: the table uses the width, no word is cut, times in the school’s zone, teams by name', async () => {
    const page = await signedIn(DESKTOP);
    const team = (await h.store.records.list('hill', 'teams'))[2]!;
    // Something for the log: a roster download of a known team.
    const pdf = await page.request.get(
      `${site.url}/rosters/teams/${team.id}.pdf?template=team-roster&school=hill`,
    );
    expect(pdf.status()).toBe(200);
    await page.goto(`${site.url}/admin/audit`);
    const width = await page.evaluate<number>(
      'document.querySelector("table").getBoundingClientRect().width',
    );
    expect(width).toBeGreaterThan(1100);
    expect(await brokenWords(page)).toEqual([]);
    const rows = page.locator('tbody tr', { hasText: 'roster' });
    const first = (await rows.first().textContent()) ?? '';
    // Sydney in November is on daylight time.
    expect(first).toMatch(/\d{2}:\d{2}:\d{2} AEDT/);
    expect(first).toContain(team.name);
    await expectPhoneFriendly(page);
    // The whole table, its detail column included, lies within the 1280 px screen (it was 1,295 px wide).
    const right = await page.evaluate<number>(
      'Math.max(...[...document.querySelectorAll("table, td")].map((e) => e.getBoundingClientRect().right))',
    );
    expect(right).toBeLessThanOrEqual(1280);
    await page.screenshot({ path: '/tmp/rostercal-admin-audit-1280.png', fullPage: true });

    // The team filter offers names, not ids to remember.
    await page.selectOption('#team', { label: team.name });
    await Promise.all([page.waitForURL(/\/admin\/audit\?/), page.click('button:has-text("Filter")')]);
    const filtered = await page.locator('tbody tr').allTextContents();
    expect(filtered.length).toBeGreaterThan(0);
    for (const row of filtered) expect(row).toContain(team.name);
  });

  it.each([
    ['phone', PHONE],
    ['desktop', DESKTOP],
  ] as const)('filtered by what happened, on a %s', async (_name, device) => {
    const page = await signedIn(device);
    // Two kinds of record: a roster download and a refused one (a template that does not exist).
    const team = (await h.store.records.list('hill', 'teams'))[3]!;
    expect(
      (
        await page.request.get(`${site.url}/rosters/teams/${team.id}.pdf?template=team-roster&school=hill`)
      ).status(),
    ).toBe(200);
    await page.request.get(`${site.url}/rosters/teams/${team.id}.pdf?template=no-such-template&school=hill`);
    await page.goto(`${site.url}/admin/audit`);
    expect(
      new Set((await page.locator('tbody td[data-label="what"]').allTextContents()).map((t) => t.trim()))
        .size,
    ).toBeGreaterThan(1);
    await page.selectOption('#action', 'roster');
    await Promise.all([
      page.waitForURL(/action=roster/),
      page.locator('button', { hasText: 'Filter' }).click(),
    ]);
    const actions = (await page.locator('tbody td[data-label="what"]').allTextContents()).map((t) =>
      t.trim(),
    );
    expect(actions.length).toBeGreaterThan(0);
    expect(new Set(actions)).toEqual(new Set(['roster']));
    expect(await page.locator('#action').inputValue()).toBe('roster');
    await expectPhoneFriendly(page);
    // An action the log does not know is a client's mistake, said as such.
    expect((await page.request.get(`${site.url}/admin/audit?action=drop-table`)).status()).toBe(400);
  });

  it('on a phone: one block per record, no sideways scrolling', async () => {
    const page = await signedIn(PHONE);
    await page.goto(`${site.url}/admin/audit`);
    await expectPhoneFriendly(page);
    await expectStaffStyle(page);
    // A record's empty fields are left out, not shown as bare labels.
    expect(await page.locator('tbody td:visible:empty').count()).toBe(0);
    expect(await page.locator('tbody td:visible').count()).toBeGreaterThan(0);
    await page.screenshot({ path: '/tmp/rostercal-admin-audit-390.png', fullPage: true });
    await page.goto(`${site.url}/admin/sessions`);
    await expectPhoneFriendly(page);
  });
});
