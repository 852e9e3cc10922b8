// The landing page a parent opens, over real HTTP from the real app: what is coming up (with place and the
// notes for families; cancellations unmistakable), freshness, the device's button first, the QR code of the
// page itself, wording per audience, and reminder variants of the feed (VALARM).
import ICAL from 'ical.js';
import nodeIcal from 'node-ical';
import pino from 'pino';
import QRCode from 'qrcode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CalendarEvent } from '../../src/calendar/types.ts';
import { withReminder } from '../../src/feeds/reminders.ts';
import type { FeedScope } from '../../src/store/types.ts';
import { type AppOptions, createApp } from '../../src/web/app.ts';
import { type RunningServer, startServer } from '../../src/web/server.ts';
import { type Harness, httpCall, startHarness } from '../feeds/harness.ts';
import { parseBoth } from '../feeds/parse.ts';

const get = (url: string, headers: Record<string, string> = {}) => httpCall(url, { headers });

const UA = {
  iphone:
    'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1',
  android:
    'Mozilla/5.0 (Linux; Android 15; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36',
  windows:
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  mac: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15',
};

const PUBLIC = 'https://cal.example.org';
let h: Harness;
let clock = new Date();
const servers: RunningServer[] = [];

async function serve(extra: Partial<AppOptions> = {}): Promise<RunningServer> {
  const app = createApp({
    store: h.store,
    feeds: h.feeds,
    metrics: h.metrics,
    publicUrl: PUBLIC,
    logger: pino({ level: 'silent' }),
    feedRateLimit: false,
    now: () => clock,
    ...extra,
  });
  const s = await startServer(app, { port: 0, host: '127.0.0.1' });
  servers.push(s);
  return s;
}

let server: RunningServer;

beforeAll(async () => {
  h = await startHarness();
  clock = new Date(h.sandbox.now());
  server = await serve();
});
afterAll(async () => {
  for (const s of servers) await s.close(1000);
  await h?.close();
});

async function tokenOf(scope: FeedScope, id: number): Promise<string> {
  return (await h.tokens.ensure('hill', scope, id)).token!;
}

/**
 * A team whose next events include one with a place and one cancelled: the second upcoming session of the
 * first team that has two is cancelled upstream (through the sandbox API), then pulled.
 */
let cancelledTeam: Promise<{ id: number; upcoming: CalendarEvent[] }> | null = null;
function teamWithCancellation(): Promise<{ id: number; upcoming: CalendarEvent[] }> {
  cancelledTeam ??= (async () => {
    for (const t of h.sandbox.school.teams) {
      const feed = await h.feeds.get('hill', 'team', t.id);
      const target = feed?.upcoming[1];
      if (!target || !feed.upcoming.some((e) => e.location)) continue;
      if (target.status !== 'cancelled') {
        const actor = h.sandbox.school.users.find((u) => !u.frozen && u.isAdmin)!.email;
        await h.client.updateSessions({
          email: actor,
          sessions: [{ id: target.sessionId, cancelled: true }],
        });
        await h.pull('incremental');
      }
      const after = (await h.feeds.get('hill', 'team', t.id))!;
      expect(after.upcoming.find((e) => e.sessionId === target.sessionId)?.status).toBe('cancelled');
      return { id: t.id, upcoming: after.upcoming };
    }
    throw new Error('the sandbox school has no team with upcoming sessions');
  })();
  return cancelledTeam;
}

function textOf(html: string): string {
  return html
    .replace(/<script[\s\S]*?<\/script>|<style[\s\S]*?<\/style>/g, '')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ');
}

function eventItems(html: string): string[] {
  return [...html.matchAll(/<li class="event [^"]*"[\s\S]*?<\/li>/g)].map((m) => m[0]);
}

describe('landing page: coming up', () => {
  it('shows each upcoming event with date, time, place and the notes for families; cancelled ones unmistakable', async () => {
    const team = await teamWithCancellation();
    const r = await get(`${server.url}/feeds/${await tokenOf('team', team.id)}`);
    expect(r.status).toBe(200);
    const items = eventItems(r.text);
    expect(items.length).toBe(team.upcoming.length);
    // Some have a place (checked below) and one is cancelled (teamWithCancellation).
    expect(team.upcoming.some((e) => e.location)).toBe(true);
    for (const [i, e] of team.upcoming.entries()) {
      const item = items[i]!;
      const text = textOf(item);
      expect(item).toContain(`data-session="${e.sessionId}"`);
      // The projection's own words (title and description), not text made up by the page.
      expect(text).toContain(textOf(e.title).trim());
      for (const line of e.description.split('\n').filter((l) => l.trim()))
        expect(text).toContain(textOf(line).trim());
      const time = new Intl.DateTimeFormat('en-GB', {
        timeZone: e.timeZone,
        hour: '2-digit',
        minute: '2-digit',
      }).format(new Date(e.start));
      expect(text).toContain(time);
      if (e.location) expect(text).toContain(`Where ${textOf(e.location.name).trim()}`);
      if (e.status === 'cancelled') {
        expect(item).toMatch(/class="event cancelled"/);
        expect(item).toContain('<p class="badge" role="status">Cancelled</p>');
      } else expect(item).not.toContain('badge');
    }
    // The notes for families of the sandbox's sessions: meet time and uniform.
    expect(textOf(r.text)).toMatch(/Meet time: \d\d:\d\d/);
    expect(textOf(r.text)).toMatch(/Uniform: /);
    // Each day has its heading (the date).
    const first = team.upcoming[0]!;
    const day = new Intl.DateTimeFormat('en-GB', {
      timeZone: first.timeZone,
      weekday: 'long',
      day: 'numeric',
      month: 'long',
    }).format(new Date(first.start));
    expect(r.text).toContain(`<h3 class="date">${day}</h3>`);
  });

  it('says how fresh it is and how often calendar apps refresh', async () => {
    const runs = await h.store.runs.listRuns('hill');
    const finished = new Date(runs.find((x) => x.status === 'succeeded')!.finishedAt!);
    clock = new Date(finished.getTime() + 5 * 60_000 + 10_000);
    const token = await tokenOf('team', h.sandbox.school.teams[0]!.id);
    const text = textOf((await get(`${server.url}/feeds/${token}`)).text);
    expect(text).toContain("Updated 5 minutes ago from the school's system.");
    expect(text).toContain('Apple Calendar about every hour');
    expect(text).toContain('Google Calendar only every 12–24 hours');
    const freshHtml = (await get(`${server.url}/feeds/${token}`)).text;
    expect(freshHtml).toMatch(/<p class="fresh" /);
    expect(textOf(freshHtml)).not.toContain('may be out of date');
    clock = new Date(finished.getTime() + 3 * 3_600_000);
    const staleHtml = (await get(`${server.url}/feeds/${token}`)).text;
    expect(textOf(staleHtml)).toContain("Updated 3 hours ago from the school's system.");
    // Past a few pull intervals the line warns, in its own style (issue 26).
    expect(staleHtml).toMatch(/<p class="fresh stale" [^>]*role="status">/);
    expect(textOf(staleHtml)).toContain('This calendar may be out of date');
    clock = new Date(h.sandbox.now());
  });
});

describe('landing page: the right button for the device', () => {
  const recommended = (html: string) =>
    /<a class="btn primary"[^>]*data-kind="([^"]+)" data-recommended="true"/.exec(html)?.[1];
  const kinds = (html: string) => [...html.matchAll(/data-kind="([^"]+)"/g)].map((m) => m[1]).sort();

  it('iPhone and Mac: Apple Calendar; Android and other computers: Google; the others still offered', async () => {
    const token = await tokenOf('team', h.sandbox.school.teams[0]!.id);
    const url = `${server.url}/feeds/${token}`;
    const expected = { iphone: 'webcal', mac: 'webcal', android: 'google', windows: 'google' } as const;
    for (const [device, kind] of Object.entries(expected)) {
      const html = (await get(url, { 'User-Agent': UA[device as keyof typeof UA] })).text;
      expect(recommended(html), device).toBe(kind);
      expect(kinds(html), device).toEqual(['google', 'office365', 'outlook-com', 'webcal']);
      expect(html.match(/data-recommended/g)?.length, device).toBe(1);
    }
  });
});

describe('landing page: QR code', () => {
  it("encodes the landing page's public URL, not the calendar file", async () => {
    const token = await tokenOf('team', h.sandbox.school.teams[1]!.id);
    const html = (await get(`${server.url}/feeds/${token}`)).text;
    const page = await QRCode.toString(`${PUBLIC}/feeds/${token}`, {
      type: 'svg',
      margin: 1,
      errorCorrectionLevel: 'M',
    });
    const ics = await QRCode.toString(`${PUBLIC}/feeds/${token}.ics`, {
      type: 'svg',
      margin: 1,
      errorCorrectionLevel: 'M',
    });
    expect(html).toContain(page);
    expect(html).not.toContain(ics);
  });

  it('is left out when the public URL is a local address, except in the demo', async () => {
    const token = await tokenOf('team', h.sandbox.school.teams[1]!.id);
    const local = await serve({ publicUrl: 'http://localhost:8080' });
    expect((await get(`${local.url}/feeds/${token}`)).text).not.toContain('<svg');
    const demo = await serve({ publicUrl: 'http://localhost:8080', demo: true });
    const html = (await get(`${demo.url}/feeds/${token}`)).text;
    expect(html).toContain(
      await QRCode.toString(`http://localhost:8080/feeds/${token}`, {
        type: 'svg',
        margin: 1,
        errorCorrectionLevel: 'M',
      }),
    );
  });
});

describe('landing page: speaks to its audience', () => {
  it('a staff page says it is a staff calendar, never "Keep it among the family", and offers no family link', async () => {
    const staff = (await h.store.records.list('hill', 'staff')).find((s) => !s.frozen)!;
    const html = (await get(`${server.url}/feeds/${await tokenOf('staff', staff.id)}`)).text;
    const text = textOf(html);
    expect(text).not.toMatch(/family/i);
    expect(text).toContain('staff notes');
    expect(html).not.toContain('action="https://cal.example.org/family"');
  });

  it('team, student and activity pages each say who may share the link', async () => {
    const team = textOf(
      (await get(`${server.url}/feeds/${await tokenOf('team', h.sandbox.school.teams[0]!.id)}`)).text,
    );
    expect(team).toContain("Share it only with the team's families.");
    const student = h.sandbox.school.students.find((s) => s.current)!;
    const st = textOf((await get(`${server.url}/feeds/${await tokenOf('student', student.id)}`)).text);
    expect(st).toContain('Keep it among the family.');
    const activity = h.sandbox.school.activities.find((a) => !a.archived)!;
    const act = textOf((await get(`${server.url}/feeds/${await tokenOf('activity', activity.id)}`)).text);
    expect(act).toContain('whole activity');
    expect(act).not.toContain('Keep it among the family.');
  });
});

describe('reminders', () => {
  it('the page lets the parent choose a reminder; the links then carry it; it says which apps honour it', async () => {
    const token = await tokenOf('team', h.sandbox.school.teams[0]!.id);
    const html = (await get(`${server.url}/feeds/${token}?reminder=1h`)).text;
    for (const v of ['none', '30m', '1h', '2h', '1d']) expect(html).toContain(`<option value="${v}"`);
    expect(html).toContain('<option value="1h" selected>');
    const variant = `${PUBLIC}/feeds/${token}.ics?reminder=1h`;
    expect(html).toContain(`href="${variant.replace('https://', 'webcal://')}"`);
    expect(html).toContain(`url=${encodeURIComponent(variant)}`);
    expect(html).toContain(`value="${variant}"`);
    // What is true per app (issue 26): Apple strips alerts unless told not to, Outlook does not fire them,
    // Google ignores them.
    const text = textOf(html);
    expect(text).not.toContain('Reminders work in Apple Calendar and Outlook');
    expect(text).toContain('untick “Remove Alarms” (iPhone, iPad) or “Remove Alerts” (Mac)');
    expect(text).toContain(
      'Outlook.com and classic Outlook generally do not fire reminders from subscribed calendars',
    );
    expect(text).toContain('Google Calendar ignores them');
    expect((await get(`${server.url}/feeds/${token}?reminder=3h`)).status).toBe(400);
  });

  it('the reminder variant carries a VALARM in every event that still takes place', async () => {
    const team = await teamWithCancellation();
    const token = await tokenOf('team', team.id);
    const plain = await get(`${server.url}/feeds/${token}.ics`);
    const r = await get(`${server.url}/feeds/${token}.ics?reminder=30m`);
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('text/calendar; charset=utf-8');
    expect(r.headers.etag).not.toBe(plain.headers.etag);
    // Same events as the plain feed, by both parsers.
    const a = parseBoth(plain.text);
    const b = parseBoth(r.text);
    expect(b.events).toEqual(a.events);
    const cal = new ICAL.Component(ICAL.parse(r.text));
    const events = cal.getAllSubcomponents('vevent');
    let withAlarm = 0;
    for (const v of events) {
      const alarms = v.getAllSubcomponents('valarm');
      if (v.getFirstPropertyValue('status') === 'CANCELLED') expect(alarms).toEqual([]);
      else {
        expect(alarms.length).toBe(1);
        expect(alarms[0]!.getFirstPropertyValue('action')).toBe('DISPLAY');
        expect(String(alarms[0]!.getFirstPropertyValue('trigger'))).toBe('-PT30M');
        withAlarm++;
      }
    }
    expect(withAlarm).toBeGreaterThan(0);
    expect(Object.values(nodeIcal.sync.parseICS(r.text)).filter((c) => c?.type === 'VEVENT').length).toBe(
      events.length,
    );
    // Conditional requests work on the variant; gzip is the variant's too.
    expect(
      (await get(`${server.url}/feeds/${token}.ics?reminder=30m`, { 'If-None-Match': r.headers.etag! }))
        .status,
    ).toBe(304);
    expect((await get(`${server.url}/feeds/${token}.ics`, { 'If-None-Match': r.headers.etag! })).status).toBe(
      200,
    );
    expect((await get(`${server.url}/feeds/${token}.ics?reminder=1d`)).text).toContain('TRIGGER:-P1D');
    expect((await get(`${server.url}/feeds/${token}.ics?reminder=soon`)).status).toBe(400);
  });

  it('a plain feed carries no VALARM; "none" is the plain feed', () => {
    const ics = 'BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:a\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n';
    expect(withReminder(ics, 'none')).toBe(ics);
    expect(withReminder(ics, '2h')).toContain(
      'TRIGGER:-PT2H\r\nEND:VALARM\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n',
    );
  });
});

// Last: it makes a team's first session a bye, which the tests above must not meet.
describe('a bye', () => {
  it('a bye is "no game" with nothing to attend: no meet time, nothing to add, no alarm (issue 42)', async () => {
    const nowMs = Date.parse(clock.toISOString());
    // The first session the page of a team lists, made a bye upstream.
    const team = h.sandbox.school.teams[0]!;
    const token = await tokenOf('team', team.id);
    const listed = (await h.feeds.get('hill', 'team', team.id))!.upcoming.find(
      (e) => e.status !== 'cancelled',
    )!;
    const s = h.sandbox.school.sessions.find((x) => x.id === listed.sessionId)!;
    Object.assign(s, { bye: true, scored: true, studentParentNotes: 'No game this week (bye).' });
    s.updatedAt = nowMs - 60_000;
    h.sandbox.setNow(clock.toISOString());
    await h.pull('full');
    const r = await get(`${server.url}/feeds/${token}`);
    const item = eventItems(r.text).find((i) => i.includes(`data-session="${s.id}"`))!;
    expect(item).toBeDefined();
    expect(item).toContain('No game');
    expect(item).toContain('no game (bye)');
    expect(item).not.toContain('Meet time');
    expect(item).not.toContain('Add to my calendar');
    const ics = (await get(`${server.url}/feeds/${token}.ics?reminder=1h`)).text.replace(/\r\n[ \t]/g, '');
    const event = ics.split('BEGIN:VEVENT').find((e) => e.includes(`session-${s.id}-`))!;
    expect(event).toContain('TRANSP:TRANSPARENT');
    expect(event).not.toContain('BEGIN:VALARM');
    expect(ics).toContain('BEGIN:VALARM');
  });
});
