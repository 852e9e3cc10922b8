// The week sandbox's school has sessions in the week of its anchor and the next whatever the date of the run: the
// tests built on it run on the real clock, and a school that kept the summer break would leave them nothing upcoming
// from mid-December to February (and nothing in the term holidays).
import { describe, expect, it } from 'vitest';
import { startSandbox } from '../../src/sandbox/index.ts';
import { weekAnchor, weekSandboxOptions } from './clock.ts';

const DAY = 86_400_000;

describe('weekSandboxOptions', () => {
  it.each([
    ['the Christmas week', '2026-12-24T03:00:00Z'],
    ['the summer break', '2026-12-28T00:00:00Z'],
    ['the week of Australia Day', '2027-01-26T05:00:00Z'],
    ['the autumn term holidays', '2027-04-14T00:00:00Z'],
  ])('builds a school with sessions in the week of its anchor and the next, in %s', async (_, date) => {
    const at = Date.parse(date);
    const sandbox = await startSandbox(weekSandboxOptions({ seed: 5, scale: 'small' }, at));
    try {
      const anchor = Date.parse(weekAnchor(at));
      const within = (from: number) =>
        sandbox.school.sessions.filter((s) => s.start >= from && s.start < from + 7 * DAY).length;
      expect(within(anchor)).toBeGreaterThan(0);
      expect(within(anchor + 7 * DAY)).toBeGreaterThan(0);
    } finally {
      await sandbox.close();
    }
  });

  it('keeps its anchor as the school’s instant', () => {
    expect(weekSandboxOptions({}, Date.parse('2026-12-31T12:00:00Z')).now).toBe('2026-12-28T00:00:00.000Z');
  });
});
