// School IT finding a calendar (issue 44), in Chromium at 390 px and 1280 px: one search box on /admin finds a
// child by name in two scripts (accents and case left off), by a student id and by a pasted calendar URL; each
// answer has its subscribe page and a "New link…" whose accessible name says which calendar; the child's link is
// rotated from the answer with the same confirmation as a team's, at either width, and the audit filtered by
// action shows that rotation. /admin is no longer a wall of cards.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { personName } from '../../src/calendar/context.ts';
import type { Harness } from '../feeds/harness.ts';
import type { StaffSite } from '../identity/harness.ts';
import type { Page } from '../support/browser.ts';
import { expectPhoneFriendly } from '../support/phone.ts';
import { type AdminWorld, DESKTOP, PHONE, startAdminWorld } from './admin-world.ts';

const ADMIN = 'admin-search-test-token-0123456789abcdef';

let world: AdminWorld;
let h: Harness;
let site: StaffSite;
const signedIn = (device: typeof PHONE | typeof DESKTOP) => world.signedIn(device);
type Student = { id: number; firstName: string; lastName: string };
let students: Student[];

beforeAll(async () => {
  world = await startAdminWorld(ADMIN);
  ({ h, site } = world);
  students = (await h.store.records.list('hill', 'students')).filter((s) => s.current);
}, 120_000);

afterAll(async () => {
  await world?.close();
});

/** Types the query into /admin's search box and waits for the answer. */
async function search(page: Page, query: string): Promise<string[]> {
  await page.goto(`${site.url}/admin`);
  await page.fill('#q', query);
  await Promise.all([page.waitForURL(/\/admin\/search\?/), page.locator('form[role=search] button').click()]);
  return page.locator('ul.hits > li strong').allTextContents();
}

const withoutMarks = (s: string) => s.normalize('NFD').replace(/\p{M}/gu, '');
/** Students of the sandbox school whose name is in a script (told by a regular expression), chosen, not named. */
const inScript = (script: RegExp) => students.filter((s) => script.test(personName(s)));
const unique = (s: Student) => students.filter((o) => personName(o) === personName(s)).length === 1;

describe.each([
  ['phone', PHONE],
  ['desktop', DESKTOP],
] as const)('finding a child on a %s', (_name, device) => {
  it('by a Latin name without its accents, and by a Cyrillic surname in lower case', async () => {
    const page = await signedIn(device);
    // A Latin name with accents whose letters are plain once the accents are gone ("Maëlys Ångström").
    const latin = inScript(/\p{Script=Latin}/u).find(
      (s) =>
        unique(s) &&
        withoutMarks(personName(s)) !== personName(s) &&
        /^[\x20-\x7e]+$/.test(withoutMarks(personName(s))),
    )!;
    expect(latin, 'the sandbox school has a child with an accented Latin name').toBeDefined();
    const typed = withoutMarks(personName(latin)).toUpperCase();
    const found = await search(page, typed);
    expect(found[0]).toBe(personName(latin));
    await expectPhoneFriendly(page);

    const cyrillic = inScript(/\p{Script=Cyrillic}/u).find((s) => /\p{Script=Cyrillic}/u.test(s.lastName))!;
    expect(cyrillic, 'the sandbox school has a child with a Cyrillic surname').toBeDefined();
    const byCyrillic = await search(page, `${cyrillic.lastName.toLowerCase()} ${cyrillic.firstName}`);
    expect(byCyrillic).toContain(personName(cyrillic));
    await expectPhoneFriendly(page);
    await page.screenshot({ path: `/tmp/rostercal-admin-search-${_name}.png`, fullPage: true });
  });

  it('by a pasted calendar URL and by student id; the answer says which calendar each link is for', async () => {
    const page = await signedIn(device);
    const child = students.find((s) => unique(s) && /\p{Script=Han}|\p{Script=Arabic}/u.test(personName(s)))!;
    const url = `${site.url}/feeds/${(await h.tokens.ensure('hill', 'student', child.id)).token!}`;
    expect(await search(page, `  ${url}.ics `)).toEqual([personName(child)]);
    expect(await page.locator('#results').textContent()).toContain('the pasted link (it works)');
    // Its two links, named for the calendar (a list of "New link…" would all sound the same).
    const rotate = page.getByRole('link', { name: `New link… for ${personName(child)} · Hillcrest College` });
    await expect(rotate.count()).resolves.toBe(1);
    const subscribe = page.getByRole('link', {
      name: `Subscribe page for ${personName(child)} · Hillcrest College`,
    });
    expect(await subscribe.getAttribute('href')).toBe(url);

    expect(await search(page, String(child.id))).toEqual([personName(child)]);
    await expectPhoneFriendly(page);
  });
});

describe.each([
  ['phone', PHONE, 0],
  ['desktop', DESKTOP, 1],
] as const)("a child's new link, from a search answer, on a %s", (_name, device, nth) => {
  it('asks first like a team’s, then the old URL is dead, the search finds the child by it, and the audit filtered by action shows it', async () => {
    const page = await signedIn(device);
    // A finger on the phone, a mouse on the desktop.
    const press = (l: ReturnType<Page['locator']>) => (device === PHONE ? l.tap() : l.click());
    const child = students.filter((s) => unique(s) && /\p{Script=Latin}/u.test(s.lastName))[nth]!;
    const old = (await h.tokens.ensure('hill', 'student', child.id)).token!;
    await search(page, personName(child));
    await Promise.all([
      page.waitForURL(/\/admin\/feeds\/rotate\?/),
      press(page.getByRole('link', { name: `New link… for ${personName(child)} · Hillcrest College` })),
    ]);
    await expect(page.locator('h1').textContent()).resolves.toContain(personName(child));
    const question = (await page.locator('main').textContent()) ?? '';
    expect(question).toContain('The current link stops working at once');
    expect(question).toContain(`${personName(child)}’s family`);
    expect((await fetch(`${site.url}/feeds/${old}.ics`)).status).toBe(200);
    await Promise.all([
      page.waitForURL(/\/admin\/feeds\/rotated\?/),
      press(page.locator('button', { hasText: 'Stop the old link and make a new one' })),
    ]);
    const sent = await page.locator('#page').inputValue();
    expect(sent).not.toContain(old);
    expect(await h.tokens.resolve(old)).toBeNull();
    expect((await fetch(`${sent}.ics`)).status).toBe(200);
    const audit = await h.store.access.listAudit({ limit: 20 });
    expect(audit.find((r) => r.action === 'feed-rotate')?.detail).toContain(`student ${child.id}`);

    // The leaked URL, pasted later: the search names the child and says that link no longer works.
    expect(await search(page, `${site.url}/feeds/${old}`)).toEqual([personName(child)]);
    expect(await page.locator('#results').textContent()).toMatch(
      /the pasted link was replaced on .*: it no longer works/,
    );

    // The audit, filtered to replaced links by its own control: the child's rotation is there, nothing else is.
    await page.goto(`${site.url}/admin/audit`);
    await page.selectOption('#action', 'feed-rotate');
    await Promise.all([
      page.waitForURL(/action=feed-rotate/),
      page.locator('button', { hasText: 'Filter' }).click(),
    ]);
    const actions = (await page.locator('tbody td[data-label="what"]').allTextContents()).map((t) =>
      t.trim(),
    );
    expect(new Set(actions)).toEqual(new Set(['feed-rotate']));
    expect(await page.locator('tbody tr', { hasText: `student ${child.id}` }).count()).toBe(1);
    await expectPhoneFriendly(page);
  });
});

describe('/admin itself', () => {
  it('at 390 px with every section open is a few screens, not 60,000 px of cards', async () => {
    const page = await signedIn(PHONE);
    await page.evaluate('document.querySelectorAll("details").forEach((d) => { d.open = true; })');
    const height = await page.evaluate<number>('document.documentElement.scrollHeight');
    // The small sandbox school: its rosters list stays; the calendars are found by the search.
    expect(height).toBeLessThan(15_000);
    expect(await page.locator('#q').count()).toBe(1);
    // A search with many answers: every "New link…" and "Subscribe page" says which calendar it is for.
    const surname = [
      ...students.reduce(
        (m, s) => m.set(s.lastName, (m.get(s.lastName) ?? 0) + 1),
        new Map<string, number>(),
      ),
    ].sort((a, b) => b[1] - a[1])[0]![0];
    const hits = await search(page, surname);
    expect(hits.length).toBeGreaterThan(1);
    const names = await page.evaluate<string[]>(
      '[...document.querySelectorAll("#results a")].map((a) => a.textContent.trim())',
    );
    expect(names.length).toBe(hits.length * 2);
    expect(new Set(names).size).toBe(names.length);
    await expectPhoneFriendly(page);
  });
});
