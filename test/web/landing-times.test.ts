// The landing page's times, built by landingPage itself: the "Next:" line above the fold reads the same 24-hour
// clock as the list below it in every locale (it once made its own Intl formatter per page, without hourCycle, so
// en-US said "03:30 PM" beside the list's "15:30"), and the page's zone note names the school's zone.
import { describe, expect, it } from 'vitest';
import type { CalendarEvent } from '../../src/calendar/types.ts';
import { type LandingInput, landingPage } from '../../src/web/landing.ts';

const SYD = 'Australia/Sydney';

function event(start: string, end: string): CalendarEvent {
  return {
    sessionId: 7,
    uid: 'session-7@bench.rostercal',
    sequence: 0,
    lastModified: '2026-02-01T00:00:00.000Z',
    start,
    end,
    timeZone: SYD,
    title: 'Under 12 Netball training',
    description: '',
    status: 'confirmed',
    location: null,
    color: null,
    categories: [],
  };
}

function page(locale: string): Promise<string> {
  const input: LandingInput = {
    scope: 'team',
    name: 'Under 12 Netball',
    description: 'Training and games',
    pageUrl: 'https://cal.example.org/feeds/x',
    feedUrl: 'https://cal.example.org/feeds/x.ics',
    reminder: 'none',
    // 04:30Z on 2 March is 15:30 AEDT (UTC+11).
    upcoming: [event('2026-03-02T04:30:00.000Z', '2026-03-02T05:30:00.000Z')],
    eventCount: 1,
    timeZone: SYD,
    updatedAt: new Date('2026-03-01T00:00:00.000Z'),
    now: new Date('2026-03-01T00:00:00.000Z'),
    device: 'desktop',
    liveGoogleCalendarId: null,
    showQr: false,
    familyFrom: null,
    locale,
  };
  return landingPage(input);
}

const nextLine = (text: string) => /<p class="next">Next: <strong>([^<]*)<\/strong>/.exec(text)?.[1];

describe('the landing page’s times', () => {
  it('the default (en-GB) page reads as it always did', async () => {
    const text = await page('en-GB');
    expect(nextLine(text)).toBe('Mon 2 Mar, 15:30');
    expect(text).toContain('<time datetime="2026-03-02T04:30:00.000Z">15:30–16:30</time>');
    expect(text).toContain('Times are Sydney time (GMT+11).');
  });

  it('"Next:" is 24-hour like the list below it, in a locale whose habit is 12-hour', async () => {
    for (const locale of ['en-US', 'en-AU']) {
      const text = await page(locale);
      expect(nextLine(text), locale).toMatch(/15:30$/);
      expect(text, locale).toContain('>15:30–16:30</time>');
    }
    // Twice in a row, from the formatters made once: the same page.
    expect(await page('en-US')).toBe(await page('en-US'));
  });
});
