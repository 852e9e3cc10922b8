// RFC 7986 COLOR takes a CSS3 colour name (feeds/css-colors.ts): the named colour nearest an activity's hex colour.
import { describe, expect, it } from 'vitest';
import { cssColorName } from '../../src/feeds/css-colors.ts';

describe('the nearest CSS colour name', () => {
  it('is the colour itself when it is named, and the nearest one otherwise', () => {
    expect(cssColorName('#ff0000')).toBe('red');
    expect(cssColorName('#000000')).toBe('black');
    expect(cssColorName('#FFFFFF')).toBe('white');
    expect(cssColorName('#6495ed')).toBe('cornflowerblue');
    expect(cssColorName('#fe0101')).toBe('red');
    expect(cssColorName('#010180')).toBe('navy');
    expect(cssColorName('#7f7f7f')).toBe('gray');
    // Nearest in RGB distance, where a sum of channel differences would pick crimson and darkmagenta.
    expect(cssColorName('#cc3333')).toBe('firebrick');
    expect(cssColorName('#6a1b9a')).toBe('purple');
  });
});
