// Letters for comparing names (calendar/letters.ts): letters NFKD leaves alone made plain, Cyrillic and Greek
// look-alikes as their Latin skeleton, and the usual romanisations of Cyrillic and Greek names.
import { describe, expect, it } from 'vitest';
import { plainLetters, romanisations } from '../../src/calendar/letters.ts';

describe('plain letters', () => {
  it('makes plain the letters NFKD and case folding leave alone', () => {
    expect(plainLetters('søren')).toBe('soren');
    expect(plainLetters('łukasz')).toBe('lukasz');
    expect(plainLetters('straße')).toBe('strasse');
    expect(plainLetters('o’brien')).toBe("o'brien");
  });

  it('gives a Cyrillic or Greek look-alike its Latin skeleton, so a mixed-script name meets the plain one', () => {
    // "xаnder" with a Cyrillic а.
    expect(plainLetters('x\u0430nder')).toBe('xander');
    expect(plainLetters('xander')).toBe('xander');
  });
});

describe('romanisations', () => {
  it('gives the common one and the variant of a Cyrillic name', () => {
    expect(romanisations('Саша')).toEqual(['sasha']);
    expect(romanisations('Шевченко')).toEqual(['shevchenko']);
    expect(romanisations('Юлия')).toEqual(['yuliya', 'iuliia']);
    expect(romanisations('Дмитрий')).toEqual(['dmitriy', 'dmitrii']);
    expect(romanisations('Харитонов')).toEqual(['kharitonov', 'haritonov']);
    // й, ё and ї are letters of their own, not и, е and і with a mark to drop.
    expect(romanisations('Сергей')).toEqual(['sergey', 'sergei']);
    expect(romanisations('Алёна')).toEqual(['alyona', 'alena']);
    expect(romanisations('Ї\u0301жак')).toEqual(['yizhak']);
  });

  it('gives those of a Greek name, marks and final sigma included', () => {
    expect(romanisations('Γιώργος')).toEqual(['giorgos']);
    expect(romanisations('Χρήστος')).toEqual(['christos', 'hristos']);
    expect(romanisations('Ευάγγελος')).toEqual(['evangelos', 'efangelos']);
  });

  it('gives none for other scripts', () => {
    expect(romanisations('Smith')).toEqual([]);
    expect(romanisations('北京')).toEqual([]);
  });
});
