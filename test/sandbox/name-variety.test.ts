// The generator's extra names per culture (sandbox/name-variety.ts): each row of its table read into legal and
// preferred given names (a name without `=` is its own preferred one), the girls' names apart, and family names;
// and the hash a rename is chosen by, FNV-1a, the same for the same text on every run.
import { describe, expect, it } from 'vitest';
import { MORE_NAMES, nameHash } from '../../src/sandbox/name-variety.ts';

describe("the generator's extra names", () => {
  it('reads each culture’s row: legal and preferred given names, the girls’ apart, and family names', () => {
    expect(Object.keys(MORE_NAMES)).toHaveLength(13);
    const english = MORE_NAMES.english!;
    expect(english.given).toContainEqual(['Daniel', 'Dan']);
    expect(english.given).toContainEqual(['Emily', 'Emily']);
    expect(english.feminine).toContain('Emily');
    expect(english.feminine).not.toContain('Daniel');
    expect(english.family[0]).toBe('Evans');
    expect(MORE_NAMES.chinese!.given).toContainEqual(['博文', 'Bowen']);
    expect(MORE_NAMES['maori-pacific']!.family).toContain('Ngata-Aerengamate');
    for (const [culture, names] of Object.entries(MORE_NAMES)) {
      for (const [legal, preferred] of names.given) expect(legal && preferred, culture).toBeTruthy();
      expect(names.feminine.length, culture).toBeLessThan(names.given.length);
      expect(
        names.family.every((f) => f.trim() === f && f.length > 0),
        culture,
      ).toBe(true);
    }
  });

  it('hashes text by FNV-1a: the known values, unsigned 32 bits', () => {
    expect(nameHash('')).toBe(0x811c9dc5);
    expect(nameHash('a')).toBe(0xe40c292c);
    expect(nameHash('foobar')).toBe(0xbf9cf968);
  });
});
