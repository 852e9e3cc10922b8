// The font subsetters (subset.ts for TrueType, subset-cff.ts for CID-keyed CFF, subset-glyphs.ts numbering both):
// each subset is read back with fontkit and its glyphs compared with the original font's, glyph by glyph: same
// outline, same advance width (TrueType; a bare CFF carries none, pdfkit takes widths from the original), glyphs
// numbered in order of use with .notdef first, and no glyph that was not asked for (or needed by a composite).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { create, type Font } from 'fontkit';
import { describe, expect, it } from 'vitest';
import { forPdfkit, type PdfkitSubset } from '../../src/rosters/subset.ts';
import { CffSubset, parseCff } from '../../src/rosters/subset-cff.ts';
import { GlyphList } from '../../src/rosters/subset-glyphs.ts';

const require = createRequire(import.meta.url);
const dejavu = readFileSync(
  join(dirname(require.resolve('dejavu-fonts-ttf/package.json')), 'ttf', 'DejaVuSans.ttf'),
);
const notoThai = readFileSync(
  join(
    dirname(require.resolve('@expo-google-fonts/noto-sans-thai/package.json')),
    '400Regular',
    'NotoSansThai_400Regular.ttf',
  ),
);
const notoHans = readFileSync(
  join(dirname(require.resolve('@embedpdf/fonts-sc')), '..', 'fonts', 'NotoSansHans-Regular.otf'),
);

function open(bytes: Uint8Array): Font {
  return create(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)) as Font;
}

/** The glyph ids fontkit lays a text out with (what pdfkit hands a subset). */
function glyphsOf(font: Font, text: string): number[] {
  return font.layout(text).glyphs.map((g) => g.id);
}

function subsetOf(font: Font, bytes: Uint8Array): PdfkitSubset {
  return (forPdfkit(font, bytes) as unknown as { createSubset(): PdfkitSubset }).createSubset();
}

/** Where each table of an sfnt lies. */
function tablesOf(bytes: Uint8Array): Map<string, Uint8Array> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Map<string, Uint8Array>();
  for (let i = 0; i < view.getUint16(4); i++) {
    const at = 12 + 16 * i;
    const tag = Buffer.from(bytes.subarray(at, at + 4)).toString('latin1');
    const offset = view.getUint32(at + 8);
    out.set(tag, bytes.subarray(offset, offset + view.getUint32(at + 12)));
  }
  return out;
}

/**
 * A bare CFF as fontkit can open it: an OpenType ('OTTO') file of the subset's CFF and the original's head and hhea,
 * with maxp saying the subset's glyph count. (No checksums: fontkit does not read them.)
 */
function openBareCff(cff: Uint8Array, original: Uint8Array, glyphCount: number): Font {
  const source = tablesOf(original);
  const maxp = new Uint8Array(source.get('maxp')!);
  new DataView(maxp.buffer).setUint16(4, glyphCount);
  const tables: [string, Uint8Array][] = [
    ['CFF ', cff],
    ['head', source.get('head')!],
    ['hhea', source.get('hhea')!],
    ['maxp', maxp],
  ];
  const parts: Buffer[] = [];
  const header = Buffer.alloc(12 + 16 * tables.length);
  header.write('OTTO', 0, 'latin1');
  header.writeUInt16BE(tables.length, 4);
  let offset = header.length;
  tables.forEach(([tag, data], i) => {
    header.write(tag, 12 + 16 * i, 'latin1');
    header.writeUInt32BE(offset, 12 + 16 * i + 8);
    header.writeUInt32BE(data.length, 12 + 16 * i + 12);
    const padded = Buffer.alloc((data.length + 3) & ~3);
    padded.set(data);
    parts.push(padded);
    offset += padded.length;
  });
  return open(Buffer.concat([header, ...parts]));
}

const outline = (font: Font, id: number) => font.getGlyph(id).path.toSVG();

/** A glyph's advance width and left side bearing, as its font's hmtx gives them. */
function metrics(font: Font, id: number): { advanceWidth: number; leftBearing: number } {
  const glyph = font.getGlyph(id) as unknown as {
    _getTableMetrics(hmtx: unknown): { advance: number; bearing: number };
  };
  const { advance, bearing } = glyph._getTableMetrics((font as unknown as { hmtx: unknown }).hmtx);
  return { advanceWidth: advance, leftBearing: bearing };
}

/** Includes each glyph, checking that new ids come in order of first use after .notdef. */
function includeAll(subset: PdfkitSubset, ids: number[]): number[] {
  const order = [0];
  for (const id of ids) {
    const gid = subset.includeGlyph(id);
    if (!order.includes(id)) order.push(id);
    expect(gid).toBe(order.indexOf(id));
  }
  return order;
}

describe('GlyphList', () => {
  it('numbers glyphs in order of first use, .notdef first, a glyph object as its id', () => {
    const list = new GlyphList();
    expect(list.include(40)).toBe(1);
    expect(list.include({ id: 7 })).toBe(2);
    expect(list.include(40)).toBe(1);
    expect(list.include(0)).toBe(0);
    expect(list.glyphs).toEqual([0, 40, 7]);
  });
});

describe('TrueType subsets (DejaVu Sans)', () => {
  const font = open(dejavu);

  it('keeps the outline and advance width of each glyph used, components of composites included, and no other', () => {
    const subset = subsetOf(font, dejavu);
    expect(subset.cff).toBeNull();
    // 'ë' 'Å' and 'ö' are composite glyphs in DejaVu: their components join the subset after the glyphs asked for.
    // The last glyphs of DejaVu lie past hhea's numberOfHMetrics: they share the last advance, with their own bearing.
    const last = font.numGlyphs - 1;
    const order = includeAll(subset, [...glyphsOf(font, 'Zoë Ånström, Wąs 42 Zoë'), last]);
    expect(order.some((id) => font.getGlyph(id).path.commands.length > 0 && isComposite(font, id))).toBe(
      true,
    );
    const bytes = subset.encode();
    const read = open(bytes);
    expect(read.numGlyphs).toBeGreaterThan(order.length); // the composites' components
    expect(read.numGlyphs).toBeLessThan(order.length + 12);
    for (const [gid, id] of order.entries()) {
      expect(outline(read, gid), `glyph ${id}`).toBe(outline(font, id));
      expect(metrics(read, gid), `glyph ${id}`).toEqual(metrics(font, id));
    }
    // Every glyph of the subset is one of the original's, with its own width.
    const originals = new Set(Array.from({ length: font.numGlyphs }, (_, id) => outline(font, id)));
    for (let gid = order.length; gid < read.numGlyphs; gid++)
      expect(originals.has(outline(read, gid))).toBe(true);
    expect(bytes.length).toBeLessThan(dejavu.length / 50);
  });

  it('reads a font with short loca offsets (Noto Sans Thai) and writes long ones', () => {
    const thai = open(notoThai);
    const subset = subsetOf(thai, notoThai);
    const order = includeAll(subset, glyphsOf(thai, 'สมชาย ใจดี'));
    const read = open(subset.encode());
    expect(read.numGlyphs).toBe(order.length);
    for (const [gid, id] of order.entries()) {
      expect(outline(read, gid), `glyph ${id}`).toBe(outline(thai, id));
      expect(metrics(read, gid), `glyph ${id}`).toEqual(metrics(thai, id));
    }
  });

  it('writes a well-formed file: checksums hold, tables in order, long loca, hinting instructions dropped', () => {
    const subset = subsetOf(font, dejavu);
    includeAll(subset, glyphsOf(font, 'Hamish Brown'));
    const bytes = subset.encode();
    const tables = tablesOf(bytes);
    expect([...tables.keys()]).toEqual([...tables.keys()].sort());
    expect(sum(bytes)).toBe(0xb1b0afba);
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    for (let i = 0; i < tables.size; i++) {
      const tag = Buffer.from(bytes.subarray(12 + 16 * i, 16 + 16 * i)).toString('latin1');
      if (tag !== 'head') expect(view.getUint32(16 + 16 * i) >>> 0, tag).toBe(sum(tables.get(tag)!));
    }
    const head = tables.get('head')!;
    expect(new DataView(head.buffer, head.byteOffset).getInt16(50)).toBe(1);
    const read = open(bytes);
    for (let gid = 1; gid < read.numGlyphs; gid++) {
      const glyph = read.getGlyph(gid) as unknown as { _decode(): { instructions?: unknown[] } | null };
      expect(glyph._decode()?.instructions ?? []).toHaveLength(0);
    }
  });
});

function isComposite(font: Font, id: number): boolean {
  const glyph = font.getGlyph(id) as unknown as { _decode(): { numberOfContours: number } | null };
  return (glyph._decode()?.numberOfContours ?? 0) < 0;
}

/** The sfnt checksum: the sum of the big-endian 32-bit words, zero-padded. */
function sum(data: Uint8Array): number {
  const padded = Buffer.alloc((data.length + 3) & ~3);
  padded.set(data);
  let total = 0;
  for (let i = 0; i < padded.length; i += 4) total = (total + padded.readUInt32BE(i)) >>> 0;
  return total;
}

interface ReadCff {
  topDict: {
    CharStrings: unknown[];
    CIDCount: number;
    charset: {
      version: number;
      glyphs?: number[];
      ranges?: { first: number; offset: number; nLeft: number }[];
    };
  };
  globalSubrIndex: unknown[];
}

const cffOf = (font: Font) => (font as unknown as { 'CFF ': ReadCff })['CFF '];

/** The CID a CID-keyed CFF's charset gives glyph `gid` (fontkit parses the charset, and reads it only for names). */
function cidOf(charset: ReadCff['topDict']['charset'], gid: number): number | undefined {
  if (gid === 0) return 0;
  if (charset.version === 0) return charset.glyphs![gid - 1];
  const range = charset.ranges!.find((r) => r.offset <= gid - 1 && gid - 1 <= r.offset + r.nLeft);
  return range && range.first + (gid - 1 - range.offset);
}

describe('CID-keyed CFF subsets (Noto Sans Hans)', () => {
  const font = open(notoHans);
  const text = '张伟 李娜 Zoë, 王芳!';

  it('keeps the outline of each glyph used, flattened, and no other', () => {
    const subset = subsetOf(font, notoHans);
    expect(subset.cff).toBeTruthy();
    const order = includeAll(subset, glyphsOf(font, text));
    const bytes = subset.encode();
    const read = openBareCff(bytes, notoHans, order.length);
    const cff = cffOf(read);
    expect(cff.topDict.CharStrings).toHaveLength(order.length);
    expect(cff.topDict.CIDCount).toBe(order.length);
    // Glyph i is CID i, as pdfkit's CIDToGIDMap (none: identity) and its W array assume.
    expect(order.map((_, gid) => cidOf(cff.topDict.charset, gid))).toEqual(order.map((_, gid) => gid));
    expect(cff.globalSubrIndex).toHaveLength(0);
    for (const [gid, id] of order.entries())
      expect(outline(read, gid), `glyph ${id}`).toBe(outline(font, id));
    expect(bytes.length).toBeLessThan(20_000);
  });

  it('keeps the subroutines where a glyph cannot be flattened, with the same outlines', () => {
    const table = tablesOf(notoHans).get('CFF ')!;
    const parsed = parseCff(table);
    const ids = glyphsOf(font, text);
    parsed.flat.set(ids[0]!, null); // as flattenCharstring says of a charstring it cannot inline
    const subset = new CffSubset(parsed);
    const order = includeAll(subset, ids);
    const read = openBareCff(subset.encode(), notoHans, order.length);
    expect(cffOf(read).globalSubrIndex.length).toBeGreaterThan(0);
    for (const [gid, id] of order.entries())
      expect(outline(read, gid), `glyph ${id}`).toBe(outline(font, id));
  });

  it('writes a subset of .notdef alone', () => {
    const subset = subsetOf(font, notoHans);
    const read = openBareCff(subset.encode(), notoHans, 1);
    expect(outline(read, 0)).toBe(outline(font, 0));
  });
});

describe('forPdfkit layout cache', () => {
  it('hands each call its own copy of a cached run, and lays out with features uncached', () => {
    const font = forPdfkit(open(dejavu), dejavu);
    const first = font.layout('office');
    const ids = first.glyphs.map((g) => g.id);
    first.positions[0]!.xAdvance = 99_999;
    first.glyphs.length = 0;
    const second = font.layout('office');
    expect(second.glyphs.map((g) => g.id)).toEqual(ids);
    expect(second.positions[0]!.xAdvance).not.toBe(99_999);
    // With ligatures off, 'ffi' is three glyphs: the cache (by text alone) must not answer for it.
    const plain = font.layout('office', { liga: false } as unknown as string[]);
    expect(plain.glyphs.length).toBeGreaterThan(ids.length);
  });
});
