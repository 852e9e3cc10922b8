// Instants as the store writes them (store/instants.ts): one canonical form, so text comparison is time comparison
// in both dialects; anything else readable is rewritten to it, anything unreadable refused naming the field.
import { describe, expect, it } from 'vitest';
import { maybeInstant, storedInstant } from '../../src/store/instants.ts';

describe('stored instants', () => {
  it('keeps the canonical form and rewrites other readable ones to it', () => {
    expect(storedInstant('2026-03-02T05:00:00.000Z', 'start')).toBe('2026-03-02T05:00:00.000Z');
    expect(storedInstant('2026-03-02T16:00:00+11:00', 'start')).toBe('2026-03-02T05:00:00.000Z');
    expect(storedInstant('2026-03-02T05:00Z', 'start')).toBe('2026-03-02T05:00:00.000Z');
    // Sorted as text, rewritten instants sort as times.
    const texts = ['2026-03-02T16:00:00+11:00', '2026-03-02T04:59:59.999Z'].map((t) => storedInstant(t, 'x'));
    expect([...texts].sort()).toEqual(['2026-03-02T04:59:59.999Z', '2026-03-02T05:00:00.000Z']);
  });

  it('refuses what it cannot read, naming the field', () => {
    expect(() => storedInstant('next Tuesday', 'session.start')).toThrow(
      'invalid instant for session.start: "next Tuesday"',
    );
    expect(maybeInstant(null, 'deletedAt')).toBeNull();
    expect(maybeInstant('2026-03-02T05:00:00Z', 'deletedAt')).toBe('2026-03-02T05:00:00.000Z');
  });
});
