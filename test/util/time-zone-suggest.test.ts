// "Did you mean …?" for a school's time zone (util/time-zone-suggest.ts, util/edit-distance.ts): a swapped pair of
// letters is one edit, a city alone finds its zone, an abbreviation names its zones, nothing close says nothing.
import { describe, expect, it } from 'vitest';
import { editDistance } from '../../src/util/edit-distance.ts';
import { didYouMean, isAbbreviation, suggestTimeZones } from '../../src/util/time-zone-suggest.ts';

describe('editDistance', () => {
  it('counts insertions, deletions, substitutions, and a swap of neighbours as one', () => {
    expect(editDistance('London', 'London')).toBe(0);
    expect(editDistance('Lodnon', 'London')).toBe(1);
    expect(editDistance('Lnoodn', 'London')).toBe(2);
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('kitten', 'sitting')).toBe(3);
  });
});

describe('suggestTimeZones', () => {
  it('finds a misspelt zone or a city alone', () => {
    expect(suggestTimeZones('Australia/Sydeny')).toEqual(['Australia/Sydney']);
    expect(suggestTimeZones('sydney')).toEqual(['Australia/Sydney']);
    expect(suggestTimeZones('new york')).toEqual(['America/New_York']);
  });

  it('names nothing when nothing is close, and no more than three', () => {
    expect(suggestTimeZones('Qwertyuiop/Zxcvbnm')).toEqual([]);
    expect(suggestTimeZones('   ')).toEqual([]);
    expect(suggestTimeZones('Lodnon').length).toBeLessThanOrEqual(3);
  });

  it('says it as one sentence, or nothing', () => {
    expect(didYouMean('Australia/Sydeny')).toBe(' Did you mean Australia/Sydney?');
    expect(didYouMean('Qwertyuiop/Zxcvbnm')).toBe('');
  });

  it('knows a fixed-offset abbreviation whatever its case, and names the zones people mean by others', () => {
    expect(isAbbreviation(' est ')).toBe(true);
    expect(isAbbreviation('AEST')).toBe(false);
    expect(suggestTimeZones('aest')).toEqual(['Australia/Sydney', 'Australia/Brisbane']);
    expect(isAbbreviation('Australia/Sydney')).toBe(false);
  });
});
