// Control and bidi-control characters out of text (util/controls.ts): a terminal or a page never shows an upstream's
// CR/LF, escape sequence or right-to-left override; JSON keeps the same value with them escaped.
import { describe, expect, it } from 'vitest';
import { escapeControlsInJson, withoutControls } from '../../src/util/controls.ts';

describe('control characters', () => {
  it('are replaced, C0, C1, DEL, bidi marks and overrides, and line separators alike', () => {
    expect(withoutControls('a\r\nb\tc\u001b[31md')).toBe('a  b c [31md');
    expect(withoutControls('x\u007fy\u0085z\u202eq\u2066r\u2028s\u200ft')).toBe('x y z q r s t');
    expect(withoutControls('a\nb', { replacement: '' })).toBe('ab');
    expect(withoutControls('Zoë Ng – 北京')).toBe('Zoë Ng – 北京');
  });

  it('keep line feeds and tabs where a page shows lines', () => {
    expect(withoutControls('a\nb\tc\rd\u202ee', { lines: true, replacement: '' })).toBe('a\nb\tcde');
  });

  it('are escaped in JSON to the same value', () => {
    const value = { name: 'a\u202eb\u0085c\u2028d' };
    const escaped = escapeControlsInJson(JSON.stringify(value));
    expect(escaped).toBe('{"name":"a\\u202eb\\u0085c\\u2028d"}');
    expect(JSON.parse(escaped)).toEqual(value);
  });
});
