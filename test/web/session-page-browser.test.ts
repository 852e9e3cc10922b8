// The coach's phone (issue 43), in Chromium at 390 px through the real OpenID sign-in, on the sandbox's school-sized
// school pulled with its medical and guardian data: a family reports an absence from its child's calendar page for a
// session about ten days ahead, and the coach's /staff names the child and the reason under that session; one tap
// opens the session page, which names them too, with every child's status and year, the ✚ mark, the conditions and
// the guardians' phones as tel: links (audited). A coach who sees the team only through an activity gets the page
// without any of it; a coach of another team, and a signed-out visitor, get nothing, and the same answer for the
// session as for one that does not exist. The page passes axe-core's WCAG 2.2 AA rules and answers in under 300 ms.
// Screenshots: /tmp/rostercal-session-{staff,page}-390.png.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Id, StaffUser, Team } from '../../src/domain/types.ts';
import { FamilyAbsences } from '../../src/families/absences.ts';
import { staffAccess } from '../../src/identity/roles.ts';
import type { Harness } from '../feeds/harness.ts';
import {
  browse,
  type CoachSite,
  CookieJar,
  coachSite,
  type PulledSchool,
  type StaffSite,
  signIn,
  type TestIdp,
} from '../identity/harness.ts';
import { axe } from '../support/axe.ts';
import { type Browser, launchBrowser, type Page } from '../support/browser.ts';
import { expectPhoneFriendly } from '../support/phone.ts';

const PHONE = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 };
const DAY = 86_400_000;
const REASON = 'grandma’s 90th birthday';

let world: CoachSite;
let h: Harness;
let idp: TestIdp;
let site: StaffSite;
let browser: Browser;
/** The team's assigned coach (allowed the medical sheet), one who sees it through an activity, one of another team. */
let coach: StaffUser;
let viaActivity: StaffUser;
let stranger: StaffUser;
let team: Team;
let child: Team['students'][number];
let sessionId: Id;

const fullName = (p: { firstName: string; lastName: string }) => `${p.firstName} ${p.lastName}`.trim();

/**
 * Picked from the store at test time: a coach's team with conditions and phones on file, whose sessions /staff lists
 * (its first three) include one 9 to 12 days ahead that a child's calendar page offers; one who sees the team through
 * an activity, one who does not see it.
 */
async function pick({ teams, staff }: PulledSchool, h: Harness) {
  const now = Date.parse(h.sandbox.now());
  for (const user of staff) {
    const access = staffAccess(user, teams);
    for (const t of teams.filter((x) => access.assignedTeamIds.has(x.id))) {
      if (!t.students.some((m) => m.medicalConditions.length > 0)) continue;
      if (!t.students.some((m) => m.guardians.some((g) => g.phone))) continue;
      const listed = (
        await h.store.records.listSessions('hill', {
          teamIds: [t.id],
          from: new Date(now).toISOString(),
          to: new Date(now + 30 * DAY).toISOString(),
        })
      )
        .sort((a, b) => a.start.localeCompare(b.start))
        .slice(0, 3);
      const s = listed.find(
        (x) => !x.cancelled && Date.parse(x.start) > now + 9 * DAY && Date.parse(x.start) < now + 12 * DAY,
      );
      if (!s) continue;
      for (const m of t.students) {
        const own = (
          await h.store.records.listSessions('hill', {
            studentId: m.studentId,
            from: new Date(now).toISOString(),
            to: new Date(now + 30 * DAY).toISOString(),
          })
        ).sort((a, b) => a.start.localeCompare(b.start));
        if (!own.slice(0, 8).some((x) => x.id === s.id)) continue;
        const away = await h.store.records.listAbsences('hill', {
          studentIds: [m.studentId],
          from: s.start,
          to: s.end,
        });
        if (away.length) continue;
        const other = staff.find((u) => {
          const a = staffAccess(u, teams);
          return a.teamIds.has(t.id) && !a.assignedTeamIds.has(t.id);
        });
        const outsider = staff.find((u) => !staffAccess(u, teams).teamIds.has(t.id));
        if (other && outsider) return { coach: user, others: [other, outsider], t, s, m, other, outsider };
      }
    }
  }
  throw new Error('no coach, team, session and child as the test needs in the generated school');
}

beforeAll(async () => {
  // The school keeps medical and guardian data: a pull with sensitive rosters on reads it.
  const w = await coachSite({
    scale: 'school',
    pick,
    site: ({ school }, h) => ({
      absences: new FamilyAbsences({
        store: h.store,
        schools: [{ ...school, families: { ...school.families, reportAbsences: true } }],
        clientFor: () => h.client,
        now: () => new Date(h.sandbox.now()),
      }),
    }),
  });
  world = w;
  expect(w.summary.status).toBe('succeeded');
  ({ h, idp, site, coach, t: team, m: child, other: viaActivity, outsider: stranger } = w);
  sessionId = w.s.id;
  browser = await launchBrowser();
}, 600_000);

afterAll(async () => {
  await browser?.close();
  await world?.close();
});

async function phone(): Promise<Page> {
  const context = await browser.newContext(PHONE);
  context.setDefaultTimeout(90_000);
  return context.newPage();
}

/** Signs in on the phone through the school's provider (one tap on the provider's page): lands on /staff. */
async function signedIn(who: StaffUser): Promise<Page> {
  const page = await phone();
  await page.goto(`${site.url}/staff`);
  expect(page.url()).toMatch(new RegExp(`^${idp.issuer}/interaction/`));
  await Promise.all([
    page.waitForURL(`${site.url}/staff`),
    page.locator('button', { hasText: fullName(who) }).tap(),
  ]);
  return page;
}

const sessionPath = (teamId: Id, id: Id) => `/staff/teams/${teamId}/sessions/${id}?school=hill`;

describe('the coach’s phone: who is out, and why', () => {
  it('a family reports for a session ten days ahead; /staff and the session page name the child and the reason', async () => {
    // The family, on its child's calendar page: "Can't make it?", a reason, Confirm.
    const family = await phone();
    const issued = await h.tokens.ensure('hill', 'student', child.studentId);
    await family.goto(`${site.url}/feeds/${issued.token}`);
    const event = family.locator(`li.event[data-session="${sessionId}"]`);
    await event.locator('summary', { hasText: 'Can’t make it?' }).tap();
    await event.locator('input[name="reason"]').fill(REASON);
    await Promise.all([
      family.waitForURL(/done=reported/),
      event.locator('button', { hasText: 'Confirm' }).tap(),
    ]);
    const reportedAt = performance.now();
    await family.context().close();

    // The coach signs in on a phone: one tap at the provider, then /staff.
    let taps = 1;
    const page = await signedIn(coach);
    const row = page.locator(`li[data-session="${sessionId}"]`).first();
    const inNext = (await page.locator(`#next li[data-session="${sessionId}"]`).count()) > 0;
    if (!inNext) {
      // Under the team's card, its next sessions folded away: one tap opens them.
      await page.locator(`#team-${team.id} details > summary`).first().tap();
      taps++;
    }
    await expect(row.isVisible()).resolves.toBe(true);
    const said = (await row.innerText()).replace(/\s+/g, ' ');
    expect(said).toContain(fullName(child));
    expect(said).toContain(`Family reported: ${REASON}`);
    const shownWithinMs = performance.now() - reportedAt;
    const tapsToRead = taps;
    await expectPhoneFriendly(page);
    await page.screenshot({ path: '/tmp/rostercal-session-staff-390.png', fullPage: true });
    const staffAxe = await axe(page);
    expect(staffAxe.violations).toEqual([]);

    // One tap: the session page.
    await Promise.all([
      page.waitForURL(/\/staff\/teams\/\d+\/sessions\/\d+/),
      row.locator('a.session').tap(),
    ]);
    taps++;
    const out = (await page.locator('#out').innerText()).replace(/\s+/g, ' ');
    expect(out).toContain(fullName(child));
    expect(out).toContain(`Family reported: ${REASON}`);
    // Every child of the team has a status: out (and why) or expected; with their year.
    const items = page.locator('ol.roster > li');
    await expect(items.count()).resolves.toBe(team.students.length);
    for (const text of await items.allInnerTexts()) expect(text).toMatch(/\n?(Out · .+|Expected)/);
    const withYear = team.students.find((m) => m.yearGroup);
    if (withYear)
      expect(await page.locator(`li[data-student="${withYear.studentId}"]`).innerText()).toContain(
        withYear.yearGroup!.name,
      );
    // Allowed the medical sheet: ✚ beside exactly the children with a condition; the guardians' phones as tel: links.
    const marked = await page
      .locator('ol.roster > li:has(span.medical)')
      .evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-student'))));
    expect(marked.sort((a, b) => a - b)).toEqual(
      team.students
        .filter((m) => m.medicalConditions.length > 0)
        .map((m) => m.studentId)
        .sort((a, b) => a - b),
    );
    const phones = team.students.flatMap((m) => m.guardians.filter((g) => g.phone));
    const tel = await page
      .locator('a[href^="tel:"]')
      .evaluateAll((els) => els.map((e) => e.getAttribute('href')));
    expect(tel).toHaveLength(phones.length);
    for (const g of phones) expect(tel).toContain(`tel:${g.phone!.replace(/[^\d+]/g, '')}`);
    // The sheets, one tap further.
    await expect(page.locator('#sheets a', { hasText: 'Attendance sheet' }).count()).resolves.toBe(1);
    await expectPhoneFriendly(page);
    await page.screenshot({ path: '/tmp/rostercal-session-page-390.png', fullPage: true });
    await page.screenshot({ path: '/tmp/rostercal-session-page-390-top.png' });
    // When: the time range on one line (at 390 px "15:30–" broke from "17:00").
    const whenLines = await page.evaluate<number>(`(() => {
      const dd = document.querySelector('dl.facts dd');
      const walker = document.createTreeWalker(dd, NodeFilter.SHOW_TEXT);
      for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        const m = /\\d{2}:\\d{2}–\\d{2}:\\d{2}/.exec(n.textContent);
        if (!m) continue;
        const range = document.createRange();
        range.setStart(n, m.index);
        range.setEnd(n, m.index + m[0].length);
        return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
      }
      return 0;
    })()`);
    expect(whenLines).toBe(1);
    // A guardian's phone: one tap opens the child's contacts, whose numbers are tel: links of at least 44 px.
    const withPhone = team.students.find((m) => m.guardians.some((g) => g.phone))!;
    await page.locator(`li[data-student="${withPhone.studentId}"] details.contacts > summary`).tap();
    await expectPhoneFriendly(page);
    await page.screenshot({ path: '/tmp/rostercal-session-contacts-390.png' });
    const pageAxe = await axe(page);
    expect(pageAxe.violations).toEqual([]);

    // Audited like a roster download: who saw this team's medical and contact data, for which session.
    const [record] = await h.store.access.listAudit({
      actor: coach.email!,
      action: 'session-medical-contacts',
    });
    expect(record).toMatchObject({ schoolId: 'hill', teamId: team.id, sessionId });

    // Its size and time from the store (no upstream read): ten requests, their median under 300 ms.
    const cookie = `rostercal_session=${(await page.context().cookies()).find((c) => c.name === 'rostercal_session')!.value}`;
    const calls = h.sandbox.stats().total;
    const times: number[] = [];
    let bytes = 0;
    for (let i = 0; i < 10; i++) {
      const t0 = performance.now();
      const res = await fetch(`${site.url}${sessionPath(team.id, sessionId)}`, { headers: { cookie } });
      bytes = (await res.arrayBuffer()).byteLength;
      times.push(performance.now() - t0);
      expect(res.status).toBe(200);
    }
    expect(h.sandbox.stats().total, 'no upstream request on the request path').toBe(calls);
    times.sort((a, b) => a - b);
    console.info(
      `taps from sign-in to who is out: ${tapsToRead} to read it on /staff${inNext ? ' (Today and next)' : ' (its team card)'}, ${taps} to the session page; shown ${Math.round(shownWithinMs)} ms after the report; session page ${bytes} bytes, median ${Math.round(times[5]!)} ms, worst ${Math.round(times[9]!)} ms; axe violations /staff ${staffAxe.violations.length} (${staffAxe.passes} rules passed), session page ${pageAxe.violations.length} (${pageAxe.passes} passed)`,
    );
    // The median, not the worst: on a 2-core machine shared with other work the slowest of ten measured the
    // machine (380 ms at load 20 in a whole-suite run), not the page.
    expect(times[5]).toBeLessThan(300);
    await page.context().close();
  }, 300_000);

  it('a coach who sees the team through an activity: the page, without any medical or contact data', async () => {
    const page = await signedIn(viaActivity);
    await page.goto(`${site.url}${sessionPath(team.id, sessionId)}`);
    await expect(page.locator('ol.roster > li').count()).resolves.toBe(team.students.length);
    await expect(page.locator('span.medical, .medical, a[href^="tel:"]').count()).resolves.toBe(0);
    const text = await page.locator('main').innerText();
    for (const m of team.students) for (const c of m.medicalConditions) expect(text).not.toContain(c);
    await expect(page.locator('#sheets a', { hasText: 'Medical' }).count()).resolves.toBe(0);
    const records = await h.store.access.listAudit({ actor: viaActivity.email! });
    expect(records.map((r) => r.action)).toContain('session-roster');
    expect(records.map((r) => r.action)).not.toContain('session-medical-contacts');
    await page.context().close();
  });

  it('a coach of another team and a signed-out visitor see none of it, and learn nothing of the session', async () => {
    const jar = new CookieJar();
    await signIn(jar, site.url, String(stranger.id));
    const theirs = await browse(jar, `${site.url}${sessionPath(team.id, sessionId)}`);
    const none = await browse(jar, `${site.url}${sessionPath(team.id, 987_654_321)}`);
    const noTeam = await browse(jar, `${site.url}${sessionPath(987_654_321, sessionId)}`);
    expect(theirs.res.status).toBe(404);
    // The same answer, to the byte, as for a session and a team that do not exist.
    expect(theirs.body).toBe(none.body);
    expect(theirs.body).toBe(noTeam.body);
    expect(theirs.body).not.toContain(child.lastName);
    expect(theirs.body).not.toContain(team.name);
    const records = await h.store.access.listAudit({ actor: stranger.email! });
    expect(records.some((r) => r.action.startsWith('session-'))).toBe(false);

    const anonymous = await fetch(`${site.url}${sessionPath(team.id, sessionId)}`, {
      redirect: 'manual',
      headers: { accept: 'text/html' },
    });
    expect(anonymous.status).toBe(303);
    expect(anonymous.headers.get('location')).toMatch(/^\/auth\/login\?returnTo=/);
    expect(await anonymous.text()).not.toContain(child.lastName);
  });
});
