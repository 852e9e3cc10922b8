// The README, the code's comments and the page say the same of what each calendar app does with reminders
// (issue 42: the README and reminders.ts once said "Apple Calendar and Outlook honour it" where the page, rightly,
// said the opposite).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { REMINDER_APPS_NOTE } from '../../src/web/landing.ts';

const read = (path: string) =>
  readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8').replace(/\s+/g, ' ');

describe('reminders per calendar app, in every place that speaks of them', () => {
  it('the page, the README and src/feeds/reminders.ts agree', () => {
    const readme = read('README.md');
    const comment = read('src/feeds/reminders.ts');
    for (const [app, page, doc] of [
      [
        'Apple',
        /Apple Calendar removes them from subscribed calendars unless you untick/,
        /Apple Calendar drops alarms from a subscribed calendar unless "Remove Alarms"/,
      ],
      [
        'Outlook',
        /Outlook\.com and classic Outlook generally do not fire reminders/,
        /Outlook\.com and classic Outlook generally do not fire them/,
      ],
      ['Google', /Google Calendar ignores them/, /Google ignores them/],
    ] as const) {
      expect(REMINDER_APPS_NOTE, app).toMatch(page);
      expect(readme, app).toMatch(doc);
    }
    for (const text of [readme, comment, REMINDER_APPS_NOTE])
      expect(text).not.toMatch(/(Apple Calendar|Outlook)[^.]{0,40}honou?rs? (it|them|reminders|alarms)/);
    // The comment points at the file whose words it defers to.
    const named = /see the page's words \(([\w-]+\.ts)\)/.exec(comment)?.[1];
    expect(named).toBe('landing.ts');
    expect(() => read(`src/web/${named}`)).not.toThrow();
  });
});
