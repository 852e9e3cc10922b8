import { describe, expect, it } from 'vitest';
import { sha256, stableStringify } from '../../src/util/stable-json.ts';

describe('stable JSON', () => {
  it('writes the same text for the same content whatever order the keys were added in, at every level', () => {
    const a = { b: 1, a: { d: [1, { y: 2, x: 1 }], c: 'é"\n' } };
    const b = { a: { c: 'é"\n', d: [1, { x: 1, y: 2 }] }, b: 1 };
    expect(stableStringify(a)).toBe(stableStringify(b));
    expect(stableStringify(a)).toBe('{"a":{"c":"é\\"\\n","d":[1,{"x":1,"y":2}]},"b":1}');
  });

  it('reads back as the same value JSON.stringify writes (same rules for undefined, functions, NaN, dates)', () => {
    const value = {
      when: new Date(Date.UTC(2026, 0, 2)),
      gone: undefined,
      fn: () => 1,
      list: [undefined, Number.NaN, Number.POSITIVE_INFINITY, null, true, false, -0.5],
      empty: {},
    };
    expect(JSON.parse(stableStringify(value))).toEqual(JSON.parse(JSON.stringify(value)));
  });

  it('hashes as the store and push store their hashes', () => {
    expect(sha256('abc', 'hex')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sha256('abc', 'base64url')).toBe('ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0');
  });
});
