// What an audience sees of an event, as a hash (calendar/content.ts): it moves with everything the event shows, and
// only with that, so a feed's SEQUENCE does not move for a change its readers cannot see.
import { describe, expect, it } from 'vitest';
import { eventContentHash } from '../../src/calendar/content.ts';
import type { CalendarEvent } from '../../src/calendar/types.ts';

const event: CalendarEvent = {
  sessionId: 1,
  uid: 'session-1@hill.rostercal',
  sequence: 0,
  lastModified: '2026-03-01T00:00:00.000Z',
  start: '2026-03-02T04:30:00.000Z',
  end: '2026-03-02T05:30:00.000Z',
  timeZone: 'Australia/Sydney',
  title: 'Football: Firsts v Riverside',
  description: 'Bring boots',
  status: 'confirmed',
  location: { name: 'Oval', address: '1 Park Rd', latitude: -33.8, longitude: 151.2 },
  color: '#336699',
  categories: ['Football'],
};

describe('an event’s content hash', () => {
  it('is short and stable', () => {
    expect(eventContentHash(event)).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(eventContentHash({ ...event })).toBe(eventContentHash(event));
  });

  it('does not move for the bookkeeping around what is shown', () => {
    const same = {
      ...event,
      sequence: 4,
      lastModified: '2026-03-05T00:00:00.000Z',
      uid: 'other@x',
      sessionId: 9,
    };
    expect(eventContentHash(same)).toBe(eventContentHash(event));
  });

  it('moves with each thing the event shows', () => {
    const changes: Partial<CalendarEvent>[] = [
      { start: '2026-03-02T04:45:00.000Z' },
      { end: '2026-03-02T05:45:00.000Z' },
      { timeZone: 'UTC' },
      { title: 'Football: Firsts v Hillside' },
      { description: '' },
      { status: 'cancelled' },
      { location: null },
      { location: { ...event.location!, name: 'Court' } },
      { location: { ...event.location!, address: null } },
      { location: { ...event.location!, latitude: -33.9 } },
      { location: { ...event.location!, longitude: 151.3 } },
      { color: null },
      { categories: ['Netball'] },
    ];
    const hashes = new Set([
      eventContentHash(event),
      ...changes.map((c) => eventContentHash({ ...event, ...c })),
    ]);
    expect(hashes.size).toBe(changes.length + 1);
  });
});
