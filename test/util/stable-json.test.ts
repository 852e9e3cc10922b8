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

  it('writes the same sorted text whether the keys arrive sorted (the engine writes it) or not', () => {
    // Each pair: built in sorted order, and the same content in another order.
    const pairs: [unknown, unknown][] = [
      [
        { a: 1, b: [{ c: 'x', d: null }] },
        { b: [{ d: null, c: 'x' }], a: 1 },
      ],
      // Integer-like keys enumerate first, whatever the order they were added in; sort() puts '10' before '9'.
      [
        { '10': 'a', '9': 'b' },
        { '9': 'b', '10': 'a' },
      ],
      [
        { A: 1, B: 2, a: 3 },
        { a: 3, B: 2, A: 1 },
      ],
      [Object.assign(Object.create(null), { a: 1, b: 2 }), { b: 2, a: 1 }],
    ];
    for (const [sorted, unsorted] of pairs) {
      expect(stableStringify(sorted)).toBe(stableStringify(unsorted));
    }
    expect(stableStringify({ '10': 'a', '9': 'b' })).toBe('{"10":"a","9":"b"}');
  });

  it('never lets the engine write what it writes differently: boxed values, toJSON, bigint, class instances', () => {
    // JSON.stringify unwraps a boxed primitive; the sorted writer writes its indexed characters, as it always has.
    expect(stableStringify({ s: new String('ab') })).toBe('{"s":{"0":"a","1":"b"}}');
    const custom = { toJSON: () => ({ z: 1, a: 2 }) };
    expect(stableStringify({ v: custom })).toBe('{"v":{"a":2,"z":1}}');
    expect(stableStringify({ n: 1n, a: [2n] })).toBe('{"a":[null],"n":null}');
    class Point {
      y = 1;
      x = 2;
    }
    expect(stableStringify({ p: new Point() })).toBe('{"p":{"x":2,"y":1}}');
    expect(stableStringify({ m: new Map([['a', 1]]), d: new Date(0) })).toBe(
      '{"d":"1970-01-01T00:00:00.000Z","m":{}}',
    );
    expect(stableStringify(undefined)).toBe('null');
    expect(stableStringify([undefined, () => 1])).toBe('[null,null]');
  });

  it('writes very deep values, and refuses a cycle as JSON.stringify does', () => {
    let deep: unknown = { a: 1 };
    for (let i = 0; i < 200; i++) deep = { k: deep };
    expect(stableStringify(deep)).toBe(JSON.stringify(deep));
    const cycle: Record<string, unknown> = { a: 1 };
    cycle.self = cycle;
    expect(() => stableStringify(cycle)).toThrow(RangeError);
  });

  it('hashes as the store and push store their hashes', () => {
    expect(sha256('abc', 'hex')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sha256('abc', 'base64url')).toBe('ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0');
  });
});
