// A stored remote calendar id carries its owner (push/calendar-id.ts), so a calendar is still reached after its
// member left the scope.
import { describe, expect, it } from 'vitest';
import { decodeCalendarId, encodeCalendarId } from '../../src/push/calendar-id.ts';

describe('stored calendar ids', () => {
  it('carry the owner when there is one, and read back to the same parts', () => {
    expect(encodeCalendarId('coach@school.edu', 'abc==')).toBe('coach@school.edu|abc==');
    expect(encodeCalendarId(null, 'abc==')).toBe('abc==');
    expect(decodeCalendarId('coach@school.edu|abc==')).toEqual({ owner: 'coach@school.edu', id: 'abc==' });
    expect(decodeCalendarId('abc==')).toEqual({ owner: null, id: 'abc==' });
    // Only the first bar separates: the rest is the provider's id.
    expect(decodeCalendarId('a@b|c|d')).toEqual({ owner: 'a@b', id: 'c|d' });
  });
});
