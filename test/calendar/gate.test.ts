// What every family-visible text goes through besides the names: cleaning and caps (calendar/gate.ts).
import { describe, expect, it } from 'vitest';
import { CAPS, capText, cleanText, throughGate } from '../../src/calendar/gate.ts';

describe('the gate’s cleaning and caps', () => {
  it('drops control, bidi and hiding characters, keeps line feeds, tabs, joiners and emoji selectors', () => {
    expect(cleanText('Main Oval \u202Eevil\u202C')).toBe('Main Oval evil');
    expect(cleanText('a\u0000b\u0007c\u001Bd\u009Be\u007F')).toBe('abcde');
    expect(cleanText('one\r\ntwo\rthree\u2028four')).toBe('one\ntwo\nthree\nfour');
    expect(cleanText('Xan\u{E0020}der\u200B \u2066x\u2069')).toBe('Xander x');
    expect(cleanText('tab\there')).toBe('tab\there');
    expect(cleanText('\u0645\u06CC\u200C\u062E\u0648\u0627\u0647\u0645 ❤\uFE0F 👩\u200D💻')).toBe(
      '\u0645\u06CC\u200C\u062E\u0648\u0627\u0647\u0645 ❤\uFE0F 👩\u200D💻',
    );
  });

  it('caps a text with an ellipsis, counting code points, and leaves a short one alone', () => {
    expect(capText('short', 10)).toBe('short');
    const long = 'All the details. '.repeat(12_500);
    const cut = capText(long, CAPS.part);
    expect([...cut].length).toBeLessThanOrEqual(CAPS.part);
    expect(cut.endsWith('…')).toBe(true);
    expect(capText('😀'.repeat(10), 10)).toBe('😀'.repeat(10));
    expect(capText('😀'.repeat(11), 10)).toBe(`${'😀'.repeat(9)}…`);
  });

  it('says every string of a value, at any depth, and nothing else', () => {
    const seen = throughGate(
      { a: 'x', n: 1, b: true, z: null, list: [{ deep: 'y' }], rec: { k: 'z' } },
      (s) => s.toUpperCase(),
    );
    expect(seen).toEqual({ a: 'X', n: 1, b: true, z: null, list: [{ deep: 'Y' }], rec: { k: 'Z' } });
  });
});
