// A feed's bytes (feeds/feed-renderer.ts): the calendar rendered from projected events, read back by three
// parsers, gzip and brotli that decompress to the same bytes, a strong ETag of the body, the next eight events not
// yet ended for the landing page, HTTP instants to the second.
import { promisify } from 'node:util';
import { brotliDecompress, gunzip } from 'node:zlib';
import { expect, it } from 'vitest';
import { projectSession } from '../../src/calendar/project.ts';
import type { CalendarEvent } from '../../src/calendar/types.ts';
import { brotliOf, etagOf, httpInstant, renderFeedBytes, upcomingOf } from '../../src/feeds/feed-renderer.ts';
import { ctx, session } from '../calendar/fixtures.ts';
import { parseAll } from './parse.ts';

const day = (n: number) => new Date(Date.UTC(2026, 2, n, 15, 30)).toISOString();
const events: CalendarEvent[] = Array.from({ length: 12 }, (_, i) => {
  const start = day(10 + i);
  const end = new Date(Date.parse(start) + 90 * 60_000).toISOString();
  return projectSession(session({ id: 700 + i, start, end, title: `Session ${i}` }), ctx(), 'guardian', {
    scope: 'team',
    id: 10,
  })!;
});
const text = {
  name: 'U15 Football',
  description: 'Riverside School: U15 Football',
  timeZone: 'Europe/London',
  window: { from: new Date('2026-03-01T00:00:00Z'), to: new Date('2026-05-01T00:00:00Z') },
};

it('renders the events, compresses them, and names the body by a strong ETag', async () => {
  const now = new Date(day(13));
  const bytes = await renderFeedBytes(text, [...events].reverse(), () => now);
  const feed = parseAll(bytes.body.toString('utf8'));
  expect(feed.name).toBe('U15 Football');
  expect(feed.events.map((e) => e.summary).sort()).toEqual(events.map((e) => e.title).sort());
  expect(bytes.eventCount).toBe(12);
  expect(bytes.trimmed).toBe(0);
  expect((await promisify(gunzip)(bytes.gzip)).equals(bytes.body)).toBe(true);
  expect((await promisify(brotliDecompress)(await brotliOf(bytes.body))).equals(bytes.body)).toBe(true);
  expect(bytes.etag).toBe(etagOf(bytes.body));
  expect(bytes.etag).toMatch(/^[A-Za-z0-9_-]{27}$/);
  expect(etagOf(Buffer.concat([bytes.body, Buffer.from(' ')]))).not.toBe(bytes.etag);
  // The next eight not yet ended, in order: the one under way at `now` included.
  expect(bytes.upcoming.map((e) => e.sessionId)).toEqual([703, 704, 705, 706, 707, 708, 709, 710]);
});

it('trims a feed over its byte limit, saying how many events it left out', async () => {
  const bytes = await renderFeedBytes({ ...text, maxBytes: 4_000 }, events, () => new Date(day(1)));
  expect(bytes.trimmed).toBeGreaterThan(0);
  expect(bytes.eventCount + bytes.trimmed).toBe(12);
  expect(bytes.body.length).toBeLessThanOrEqual(4_000);
  expect(parseAll(bytes.body.toString('utf8')).events).toHaveLength(bytes.eventCount);
});

it('lists an event under way as upcoming, and truncates HTTP instants to the second', () => {
  const during = new Date(Date.parse(events[2]!.start) + 60_000);
  expect(upcomingOf(events, during)[0]?.sessionId).toBe(702);
  expect(upcomingOf(events, new Date(day(30)))).toEqual([]);
  expect(httpInstant(new Date('2026-03-10T15:30:00.999Z')).toISOString()).toBe('2026-03-10T15:30:00.000Z');
});
