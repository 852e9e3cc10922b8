// "My teams" for a coach of six teams in the sandbox's school-sized school, in Chromium at phone width (390 × 844)
// and on a desktop (1280 px). The issue saw a 14,781 px page (the other teams of the coach's activities listed in
// full below), no "today and next" across the coach's teams, two sheets of one day both labelled "Attendance sheet ·
// Wed 2 Dec", and the tag "hidden" unexplained. Screenshots: /tmp/rostercal-staff-{390,1280}.png.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StaffUser } from '../../src/domain/types.ts';
import { staffAccess } from '../../src/identity/roles.ts';
import { type Harness, startHarness } from '../feeds/harness.ts';
import {
  CookieJar,
  type StaffSite,
  signIn,
  startStaffSite,
  startTestIdp,
  type TestIdp,
} from '../identity/harness.ts';
import { type Browser, type BrowserContext, launchBrowser, type Page } from '../support/browser.ts';
import { expectPhoneFriendly } from '../support/phone.ts';
import { freePort } from '../support/ports.ts';

const PHONE = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 };
const DESKTOP = { viewport: { width: 1280, height: 900 } };
const TIME = /\b\d{2}:\d{2}\b/;

let h: Harness;
let idp: TestIdp;
let site: StaffSite;
let browser: Browser;
let coach: StaffUser;
/** A coach of a team the school's system hides (from students and families there). */
let hiddenCoach: StaffUser;
let hiddenTeam: string;
let ownTeamIds: ReadonlySet<number>;
let nextAbsent: number;
/** The two students reported away from the next session, by name. */
let dentist: string[];
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  h = await startHarness({ scale: 'school' });
  const teams = await h.store.records.list('hill', 'teams');
  const coaches = (await h.store.records.list('hill', 'staff'))
    .filter((s) => s.email && !s.frozen && !s.isAdmin && !s.isManager)
    .map((s) => ({ s, access: staffAccess(s, teams) }))
    .sort((a, b) => b.access.assignedTeamIds.size - a.access.assignedTeamIds.size);
  const busiest = coaches[0]!;
  expect(busiest.access.assignedTeamIds.size, 'the school has a coach of six teams').toBe(6);
  expect(busiest.access.teamIds.size, 'whose activities hold other teams').toBeGreaterThan(6);
  coach = busiest.s as unknown as StaffUser;
  ownTeamIds = busiest.access.assignedTeamIds;
  const hidden = teams.find((t) => t.hidden && coaches.some((c) => c.access.assignedTeamIds.has(t.id)))!;
  expect(hidden, 'a hidden team with a coach').toBeDefined();
  hiddenTeam = hidden.name;
  hiddenCoach = coaches.find((c) => c.access.assignedTeamIds.has(hidden.id))!.s as unknown as StaffUser;

  // Two students of the coach's next session have told the school they will be away (pre-explained absences).
  const next = (
    await h.store.records.listSessions('hill', {
      teamIds: [...ownTeamIds],
      from: new Date(h.sandbox.now()).toISOString(),
    })
  )
    .filter((s) => !s.cancelled)
    .sort((a, b) => a.start.localeCompare(b.start))[0]!;
  const team = teams.find((t) => t.id === next.teams.find((x) => ownTeamIds.has(x.id))!.id)!;
  dentist = team.students.slice(0, 2).map((s) => `${s.firstName} ${s.lastName}`);
  await h.client.createAbsences(
    team.students.slice(0, 2).map((s) => ({
      studentId: s.studentId,
      startDate: next.start,
      endDate: next.end,
      explained: true,
      reason: 'Dentist',
    })),
  );
  await h.pull('incremental');
  // With those the school already had (the sandbox's own), counted as the sheet marks them: per student.
  const overlapping = await h.store.records.listAbsences('hill', {
    studentIds: team.students.map((s) => s.studentId),
    from: next.start,
    to: next.end,
  });
  nextAbsent = new Set(overlapping.map((a) => a.studentId)).size;
  expect(nextAbsent).toBeGreaterThanOrEqual(2);

  const port = await freePort();
  idp = await startTestIdp(
    [coach, hiddenCoach].map((u) => ({
      id: String(u.id),
      email: u.email!,
      name: String(u.id),
      role: 'staff' as const,
      note: '',
    })),
    `http://127.0.0.1:${port}/auth/callback`,
  );
  site = await startStaffSite(h, { port, idp });
  browser = await launchBrowser();
}, 300_000);

afterAll(async () => {
  for (const c of contexts) await c.close();
  await browser?.close();
  await site?.close();
  await idp?.close();
  await h?.close();
});

/** /staff in a browser signed in as the coach (the sign-in itself is walked over HTTP; browser.test.ts taps it). */
async function staffPage(device: typeof PHONE | typeof DESKTOP, who = coach): Promise<Page> {
  const jar = new CookieJar();
  const landed = await signIn(jar, site.url, String(who.id));
  expect(landed.res.status).toBe(200);
  const context = await browser.newContext(device);
  contexts.push(context);
  await context.addCookies([
    { name: 'rostercal_session', value: jar.get(site.url, 'rostercal_session')!, url: site.url },
  ]);
  const page = await context.newPage();
  await page.goto(`${site.url}/staff`);
  return page;
}

const pageHeight = (page: Page) => page.evaluate<number>('document.documentElement.scrollHeight');

describe('/staff for a coach of six teams', () => {
  it('on a phone: at most three screens, today and next on top with times, absences and one-tap sheets', async () => {
    const page = await staffPage(PHONE);
    await page.screenshot({ path: '/tmp/rostercal-staff-390.png', fullPage: true });
    const height = await pageHeight(page);
    expect(height, `page height at 390 px: ${height}`).toBeLessThanOrEqual(3 * 844);
    await expectPhoneFriendly(page);

    // The first thing under the heading: the coming sessions across the coach's own teams, soonest first.
    const next = page.locator('#next');
    await expect(next.locator('h2').textContent()).resolves.toMatch(/today and next/i);
    const items = await next.locator('li[data-session]').evaluateAll((els) =>
      els.map((e) => ({
        text: (e.textContent ?? '').replace(/\s+/g, ' '),
        session: e.getAttribute('data-session'),
      })),
    );
    expect(items.length).toBeGreaterThan(1);
    const sessions = await h.store.records.listSessions('hill', {
      teamIds: [...ownTeamIds],
      from: new Date(h.sandbox.now()).toISOString(),
    });
    const starts = items.map((i) => sessions.find((s) => String(s.id) === i.session)!.start);
    expect(starts).toEqual([...starts].sort());
    for (const item of items) expect(item.text).toMatch(TIME);
    // The next session shows the absences reported for it, each child named with the reason (issue 43: never
    // only a count).
    expect(items[0]!.text).toContain(`${nextAbsent} absences reported`);
    for (const name of dentist) expect(items[0]!.text).toContain(`${name} · Pre-explained: Dentist`);

    // Every sheet on the page says which session it is by its time, not only its day.
    const labels = await page.locator('a', { hasText: /sheet/i }).allTextContents();
    expect(labels.length).toBeGreaterThan(0);
    for (const label of labels) expect(label, label).toMatch(TIME);

    // One tap from the top of the page: the first sheet is a PDF of the next session.
    const sheet = next.locator('a', { hasText: 'Attendance sheet' }).first();
    const href = new URL((await sheet.getAttribute('href'))!, site.url);
    expect(href.searchParams.get('session')).toBe(items[0]!.session);
    const res = await fetch(href, {
      headers: { cookie: `rostercal_session=${(await page.context().cookies())[0]!.value}` },
    });
    expect(res.headers.get('content-type')).toBe('application/pdf');

    // The other teams of the coach's activities are there, folded away until asked for.
    const others = page.locator('details#other-teams');
    await expect(others.count()).resolves.toBe(1);
    await expect(page.evaluate('document.querySelector("details#other-teams").open')).resolves.toBe(false);
    await expect(others.locator('> summary').textContent()).resolves.toMatch(/other teams/i);
  });

  it('on a phone, a sheet button never breaks its day and time across lines (was "10:00–" / "11:15")', async () => {
    const page = await staffPage(PHONE);
    await page.evaluate('document.querySelectorAll("details").forEach((d) => { d.open = true; })');
    const broken = await page.evaluate<string[]>(`
      [...document.querySelectorAll('a')].filter((a) => /sheet/i.test(a.textContent)).flatMap((a) => {
        const walker = document.createTreeWalker(a, NodeFilter.SHOW_TEXT);
        const out = [];
        for (let n = walker.nextNode(); n; n = walker.nextNode()) {
          // The day and time, and the sheet's name: each one piece (a flex button split "Attendance" / "sheet ·").
          const m =
            /(?:[A-Z][a-z]{2} \\d{1,2} [A-Z][a-z]{2} )?\\d{2}:\\d{2}–\\d{2}:\\d{2}/.exec(n.textContent) ??
            /(?:Attendance|Match-day) sheet/.exec(n.textContent);
          if (!m) continue;
          const range = document.createRange();
          range.setStart(n, m.index);
          range.setEnd(n, m.index + m[0].length);
          const tops = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
          if (tops.size > 1) out.push(a.textContent.trim());
        }
        return out;
      })`);
    const sheets = await page.locator('a', { hasText: /sheet · [A-Z][a-z]{2} \d/ }).count();
    expect(sheets, 'sheets labelled with a day').toBeGreaterThan(0);
    expect(broken).toEqual([]);
    // Read as one line of words: "Attendance sheet · Sat 21 Nov 10:00–11:15", the space after the dot kept.
    for (const text of await page.locator('a', { hasText: /sheet/ }).allInnerTexts())
      expect(text.replace(/\s+/g, ' '), text).toMatch(/^(Attendance|Match-day) sheet · \S/);
    await page.screenshot({ path: '/tmp/screens-staff-sheets-390.png', fullPage: true });
  });

  it('says in words what a hidden team is, on the team it concerns', async () => {
    const page = await staffPage(PHONE, hiddenCoach);
    const card = page.locator('section[id^="team-"]', { hasText: hiddenTeam });
    const text = (await card.innerText()).replace(/\s+/g, ' ');
    expect(text).not.toMatch(/·\s*hidden\b/);
    expect(text).toMatch(/hidden in the school’s system: students and families do not see it listed there/i);
    await expectPhoneFriendly(page);
  });

  it('on a desktop (1280 px): the same page, no sideways scrolling', async () => {
    const page = await staffPage(DESKTOP);
    await page.screenshot({ path: '/tmp/rostercal-staff-1280.png', fullPage: true });
    const widths = await page.evaluate<{ scroll: number; client: number }>(
      '({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth })',
    );
    expect(widths.scroll).toBeLessThanOrEqual(widths.client);
    expect(await pageHeight(page)).toBeLessThanOrEqual(3 * 900);
    await expect(page.locator('#next li').count()).resolves.toBeGreaterThan(1);
  });
});
