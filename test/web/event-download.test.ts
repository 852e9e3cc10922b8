// One session to add, and its venue on a map, from the page a parent opens (issue 26: "a venue's coordinates are
// in the ICS but the page offers no map; a parent cannot add one event to a calendar"). Over real HTTP: each
// coming session offers its own .ics under the same capability link, the very event of the feed (same UID, same
// bytes, the chosen reminder too), parsed by three parsers; a rotated link's downloads are the same 404 as an
// unknown link's, and so is a session the page does not show. In Chromium at 390 px: the links are tappable and
// the page still fits. Screenshot: /tmp/rostercal-landing-events-390.png.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CalendarEvent } from '../../src/calendar/types.ts';
import type { RunningServer } from '../../src/web/server.ts';
import { type Harness, startHarness } from '../feeds/harness.ts';
import { parseBoth } from '../feeds/parse.ts';
import { type Browser, launchBrowser } from '../support/browser.ts';
import { expectPhoneFriendly } from '../support/phone.ts';

const PUBLIC = 'https://cal.example.org';
const ANDROID =
  'Mozilla/5.0 (Linux; Android 15; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36';

let h: Harness;
let server: RunningServer;
let browser: Browser;
/** A team whose coming sessions include one at a venue with coordinates. */
let team: { id: number; token: string; located: CalendarEvent };

const local = (url: string) => url.replace(PUBLIC, server.url);
const get = async (url: string) => {
  const res = await fetch(local(url));
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
};

/** The VEVENT with this UID, as the bytes say it (folded lines and all), found without our own code. */
function vevent(ics: string, uid: string): string | undefined {
  return ics
    .split('BEGIN:VEVENT\r\n')
    .slice(1)
    .map((part) => `BEGIN:VEVENT\r\n${part.slice(0, part.indexOf('END:VEVENT\r\n'))}END:VEVENT\r\n`)
    .find((block) => block.replace(/\r\n[ \t]/g, '').includes(`\r\nUID:${uid}\r\n`));
}

beforeAll(async () => {
  h = await startHarness();
  server = await h.serve({ publicUrl: PUBLIC });
  for (const t of await h.store.records.list('hill', 'teams')) {
    const feed = await h.feeds.get('hill', 'team', t.id);
    const located = feed?.upcoming.find(
      (e) => e.status !== 'cancelled' && e.location?.latitude != null && e.location.longitude != null,
    );
    if (located) {
      team = { id: t.id, token: (await h.tokens.ensure('hill', 'team', t.id)).token!, located };
      break;
    }
  }
  expect(team, 'a team with a coming session at a venue with coordinates').toBeDefined();
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await h?.close();
});

describe('a coming session, alone, from the landing page', () => {
  it('every session that takes place links its own .ics: the feed’s event to the byte, parsed by three parsers', async () => {
    const feed = (await h.feeds.get('hill', 'team', team.id))!;
    const page = await get(`${PUBLIC}/feeds/${team.token}`);
    const full = await get(`${PUBLIC}/feeds/${team.token}.ics`);
    for (const e of feed.upcoming) {
      const href = `${PUBLIC}/feeds/${team.token}/events/${e.sessionId}.ics`;
      if (e.status === 'cancelled') {
        expect(page.text, `cancelled ${e.sessionId} is not offered`).not.toContain(`href="${href}"`);
        continue;
      }
      expect(page.text).toContain(`href="${href}"`);
      const one = await get(href);
      expect(one.status).toBe(200);
      expect(one.type).toBe('text/calendar; charset=utf-8');
      const parsed = parseBoth(one.text);
      expect(parsed.events.map((x) => x.uid)).toEqual([e.uid]);
      expect(vevent(one.text, e.uid), 'the feed’s own event').toBe(vevent(full.text, e.uid));
      // A file to add, not a calendar to subscribe to: no name, colour or refresh interval of the feed.
      expect(one.text).not.toMatch(/^(X-WR-CALNAME|NAME|COLOR|X-APPLE-CALENDAR-COLOR|REFRESH-INTERVAL)[:;]/m);
      expect(one.text).toContain('BEGIN:VTIMEZONE');
    }
  });

  it('the reminder chosen on the page rides along, as the reminder variant of the feed says it', async () => {
    const e = team.located;
    const page = await get(`${PUBLIC}/feeds/${team.token}?reminder=1h`);
    const href = `${PUBLIC}/feeds/${team.token}/events/${e.sessionId}.ics?reminder=1h`;
    expect(page.text).toContain(`href="${href.replace('&', '&amp;')}"`);
    const one = await get(href);
    const variant = await get(`${PUBLIC}/feeds/${team.token}.ics?reminder=1h`);
    expect(vevent(one.text, e.uid)).toContain('TRIGGER:-PT1H');
    expect(vevent(one.text, e.uid)).toBe(vevent(variant.text, e.uid));
  });

  it('the venue on a map: OpenStreetMap at the feed’s own GEO, and the maps app (geo:) on Android', async () => {
    const e = team.located;
    const { latitude: lat, longitude: lon } = e.location!;
    const full = await get(`${PUBLIC}/feeds/${team.token}.ics`);
    expect(vevent(full.text, e.uid)).toContain(`GEO:${lat};${lon}`);
    const page = await get(`${PUBLIC}/feeds/${team.token}`);
    const osm = `https://www.openstreetmap.org/?mlat=${lat}&amp;mlon=${lon}#map=17/${lat}/${lon}`;
    expect(page.text).toContain(`href="${osm}" rel="noreferrer noopener" target="_blank">Map</a>`);
    expect(page.text).not.toContain('href="geo:');
    const android = await (
      await fetch(local(`${PUBLIC}/feeds/${team.token}`), { headers: { 'user-agent': ANDROID } })
    ).text();
    expect(android).toContain(`href="geo:${lat},${lon}?q=${lat},${lon}(`);
  });

  it('a session the page does not show, and every download of a rotated link, answer as an unknown link', async () => {
    const unknown = await get(`${PUBLIC}/feeds/${'x'.repeat(43)}/events/${team.located.sessionId}.ics`);
    expect(unknown.status).toBe(404);
    const other = (await h.store.records.listSessions('hill', {})).find(
      (s) => !s.teams.some((t) => t.id === team.id),
    )!;
    for (const path of [`${other.id}.ics`, '0.ics', 'abc.ics', `${team.located.sessionId}`]) {
      const res = await get(`${PUBLIC}/feeds/${team.token}/events/${path}`);
      expect(res.status, path).toBe(404);
      expect(res.text, path).toBe(unknown.text);
    }
    const page = await get(`${PUBLIC}/feeds/${team.token}`);
    const offered = [...page.text.matchAll(/href="[^"]*\/events\/(\d+)\.ics"/g)].map((m) => m[1]!);
    const old = team.token;
    const rotated = await h.tokens.rotate('hill', 'team', team.id);
    team.token = rotated.token!;
    for (const id of offered) {
      const res = await get(`${PUBLIC}/feeds/${old}/events/${id}.ics`);
      expect(res.status).toBe(404);
      expect(res.text).toBe(unknown.text);
      expect((await get(`${PUBLIC}/feeds/${team.token}/events/${id}.ics`)).status).toBe(200);
    }
  });

  it('a family link offers each coming session too, as its own calendar says it', async () => {
    const second = (await h.store.records.list('hill', 'teams')).find((t) => t.id !== team.id)!;
    const other = (await h.tokens.ensure('hill', 'team', second.id)).token!;
    const made = await fetch(local(`${PUBLIC}/family`), {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ from: team.token, links: `${PUBLIC}/feeds/${other}` }),
    });
    expect(made.status).toBe(303);
    const familyUrl = made.headers.get('location')!;
    const page = await get(familyUrl);
    const full = await get(`${familyUrl}.ics`);
    const ids = [...page.text.matchAll(/href="[^"]*\/events\/(\d+)\.ics"/g)].map((m) => m[1]!);
    expect(ids.length).toBeGreaterThan(0);
    for (const id of ids) {
      const one = await get(`${familyUrl}/events/${id}.ics`);
      expect(one.status).toBe(200);
      const [event] = parseBoth(one.text).events;
      expect(vevent(one.text, event!.uid)).toBe(vevent(full.text, event!.uid));
    }
  });

  it('in Chromium at 390 px: tappable, the page still fits, and the tap brings the calendar file', async () => {
    const context = await browser.newContext({
      viewport: { width: 390, height: 844 },
      isMobile: true,
      hasTouch: true,
      deviceScaleFactor: 2,
      userAgent: ANDROID,
      acceptDownloads: true,
    });
    // The page's links are absolute (PUBLIC_URL): the browser's requests for it are answered by the server here.
    await context.route(`${PUBLIC}/**`, async (route) => {
      const res = await fetch(local(route.request().url()), { headers: route.request().headers() });
      const headers = Object.fromEntries(
        [...res.headers].filter(([k]) => k !== 'content-encoding' && k !== 'content-length'),
      );
      await route.fulfill({ status: res.status, headers, body: Buffer.from(await res.arrayBuffer()) });
    });
    const page = await context.newPage();
    await page.goto(`${PUBLIC}/feeds/${team.token}`);
    await expectPhoneFriendly(page);
    const item = page.locator(`li[data-session="${team.located.sessionId}"]`);
    await item.scrollIntoViewIfNeeded();
    await expect(item.locator('a', { hasText: 'Map' }).isVisible()).resolves.toBe(true);
    await expect(item.locator('a', { hasText: 'Directions' }).isVisible()).resolves.toBe(true);
    await page.screenshot({ path: '/tmp/rostercal-landing-events-390.png', fullPage: true });
    const add = item.locator('a', { hasText: 'Add to my calendar' });
    await expect(add.getAttribute('aria-label')).resolves.toContain(team.located.title);
    const response = page.waitForResponse((r) => r.url().includes('/events/'), { timeout: 30_000 });
    await add.tap().catch(() => {
      // A download aborts the navigation: the response below is what counts.
    });
    const served = await response;
    expect(served.status()).toBe(200);
    expect(served.headers()['content-type']).toBe('text/calendar; charset=utf-8');
    await context.close();
  });
});
