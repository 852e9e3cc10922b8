// Live Google calendar: a Google target with `calendars.familiesMayAdd` makes the team calendars it keeps
// publicly readable through the API (the fake speaks the acl endpoint), and the team's landing page then offers
// "Add to Google Calendar — updates within minutes" with that calendar instead of Google's 12–24 h feed.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PushTargetConfig, parseTargets } from '../../src/config/push-targets.ts';
import { ConfigError } from '../../src/config.ts';
import { liveGoogleCalendars } from '../../src/push/family-calendars.ts';
import { pushTarget } from '../../src/push/run.ts';
import { createApp } from '../../src/web/app.ts';
import { type RunningServer, startServer } from '../../src/web/server.ts';
import { type FakeGoogle, startFakeGoogle } from '../fakes/google-calendar.ts';
import { type Harness, httpCall, startHarness } from '../feeds/harness.ts';

const get = (url: string, ua = '') => httpCall(url, { headers: { 'User-Agent': ua } });

const ANDROID =
  'Mozilla/5.0 (Linux; Android 15; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36';

function googleTarget(fake: FakeGoogle, ids: number[], calendars: Record<string, unknown>, extra = {}) {
  return parseTargets(
    [
      {
        id: 'family-google',
        provider: 'google',
        scope: 'team',
        ids,
        google: {
          rootUrl: fake.url,
          auth: { accessToken: fake.token },
          writesPerSecond: 2000,
          backoff: { baseMs: 2, capMs: 20, maxRetries: 12 },
          calendars,
        },
        ...extra,
      },
    ],
    'schools[0].targets',
  )[0]!;
}

let h: Harness;
/** The harness's clock (TEST_NOW on): pushes take it, as pull and pages do. */
const sandboxNow = () => new Date(h.sandbox.now());
let fake: FakeGoogle;
let server: RunningServer;
let targets: PushTargetConfig[] = [];

beforeAll(async () => {
  [h, fake] = await Promise.all([startHarness(), startFakeGoogle()]);
  const app = createApp({
    store: h.store,
    feeds: h.feeds,
    metrics: h.metrics,
    publicUrl: 'https://cal.example.org',
    logger: pino({ level: 'silent' }),
    feedRateLimit: false,
    now: () => new Date(h.sandbox.now()),
    liveGoogleCalendar: (...args) => liveGoogleCalendars(h.store, [{ id: 'hill', targets }])(...args),
  });
  server = await startServer(app, { port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await server?.close(1000);
  await fake?.close();
  await h?.close();
});

describe('live Google calendar for families', () => {
  it('the target option makes the calendars public through the API, new ones and existing ones', async () => {
    const [a, b] = h.sandbox.school.teams;
    // b's calendar exists before the option is turned on.
    const before = googleTarget(fake, [b!.id], {});
    expect(
      (await pushTarget({ store: h.store, school: h.school, now: sandboxNow, target: before })).status,
    ).toBe('succeeded');
    const bCal = () => fake.calendars().find((c) => c.summary.startsWith(b!.name));
    expect(bCal()?.acl.some((r) => r.id === 'default')).toBe(false);

    const target = googleTarget(fake, [a!.id, b!.id], { familiesMayAdd: true });
    fake.resetStats();
    expect((await pushTarget({ store: h.store, school: h.school, now: sandboxNow, target })).status).toBe(
      'succeeded',
    );
    for (const team of [a!, b!]) {
      const cal = fake.calendars().find((c) => c.summary.startsWith(team.name))!;
      expect(
        cal.acl.find((r) => r.id === 'default'),
        team.name,
      ).toMatchObject({
        role: 'reader',
        scope: { type: 'default' },
      });
    }
    expect(fake.stats.byOperation['POST acl.insert']).toBe(2);
  });

  it('the landing page offers "Add to Google Calendar — updates within minutes" with that calendar, first on Android', async () => {
    const [a, , c] = h.sandbox.school.teams;
    targets = [googleTarget(fake, [a!.id], { familiesMayAdd: true })];
    const calendarId = fake.calendars().find((x) => x.summary.startsWith(a!.name))!.id;
    const token = (await h.tokens.ensure('hill', 'team', a!.id)).token!;
    const html = (await get(`${server.url}/feeds/${token}`, ANDROID)).text;
    const live =
      /<a class="btn primary" href="([^"]+)" data-kind="google-live" data-recommended="true"[^>]*>([^<]+)<\/a>/.exec(
        html,
      );
    expect(live?.[2]).toBe('Add to Google Calendar — updates within minutes');
    const href = new URL(live![1]!.replaceAll('&amp;', '&'));
    expect(href.origin + href.pathname).toBe('https://calendar.google.com/calendar/render');
    expect(href.searchParams.get('cid')).toBe(calendarId);
    // The feed subscription to Google is not offered beside it; the other apps are.
    expect(html).not.toContain('data-kind="google"');
    for (const kind of ['webcal', 'outlook-com', 'office365']) expect(html).toContain(`data-kind="${kind}"`);

    // A team without such a calendar keeps the ordinary Google button.
    const other = (await h.tokens.ensure('hill', 'team', c!.id)).token!;
    const plain = (await get(`${server.url}/feeds/${other}`, ANDROID)).text;
    expect(plain).not.toContain('google-live');
    expect(plain).toContain('data-kind="google" data-recommended="true"');

    // Without the option the calendar is not offered, even though it exists.
    targets = [googleTarget(fake, [a!.id], {})];
    expect((await get(`${server.url}/feeds/${token}`, ANDROID)).text).not.toContain('google-live');
  });

  it('refuses the option where it would publish a staff or student-person calendar', () => {
    expect(() => googleTarget(fake, [1], { familiesMayAdd: true }, { scope: 'staff' })).toThrow(ConfigError);
    expect(() => googleTarget(fake, [1], { familiesMayAdd: true }, { scope: 'staff' })).toThrow(
      /targets\[0\]\.google\.calendars\.familiesMayAdd: makes calendars public: scope must be "team" or "activity"/,
    );
    // Nor a student's own calendar (one child's schedule), whoever it speaks to.
    expect(() => googleTarget(fake, [1], { familiesMayAdd: true }, { scope: 'student' })).toThrow(
      /familiesMayAdd: makes calendars public: scope must be "team" or "activity", not "student"/,
    );
    expect(() =>
      googleTarget(fake, [1], { familiesMayAdd: true }, { scope: 'student', audience: 'guardian' }),
    ).toThrow(/scope must be "team" or "activity"/);
    expect(() => googleTarget(fake, [1], { familiesMayAdd: true }, { audience: 'staff' })).toThrow(
      /familiesMayAdd: makes calendars public: the audience must be "guardian" or "student"/,
    );
  });
});
