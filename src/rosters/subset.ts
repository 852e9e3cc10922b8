// Fast font subsetting for pdfkit. pdfkit embeds a subset of each font it uses, built by fontkit's subsetters; those
// encode through a generic struct library and cost ~20 ms for a DejaVu subset and ~200-350 ms for a subset of the
// CID-keyed CFF Noto Sans Hans, per document. These writers copy the needed bytes directly and produce the same kind
// of font program pdfkit expects: a TrueType font with head/hhea/maxp/loca/glyf/hmtx (and the hinting tables) for
// FontFile2, or a bare CID-keyed CFF for FontFile3/CIDFontType0C. New glyph ids are assigned in order of use, glyph 0
// (.notdef) first, exactly as fontkit's subsets do, so pdfkit's own bookkeeping is unchanged. They read only the font
// file's bytes (its table directory, loca, CFF), never fontkit's private fields.
//
// Why not a maintained subsetter (issue 29): HarfBuzz's hb-subset (harfbuzzjs 1.6.4, WebAssembly, the engine of
// `subset-font`) was measured against these writers by `npm run bench:subset`, per document, giving HarfBuzz its best
// case (the font copied into WebAssembly memory and its face made once, outside the timing). Medians, 27 Nov 2026,
// on this project's shared 2-core machine:
//   DejaVu Sans, a 40-student roster (115 glyphs):      0.2 ms here,  1.8 ms hb-subset (9x slower)
//   Noto Sans Hans, a 40-student roster (81 glyphs):    0.2 ms here, 24.5 ms hb-subset (120x slower)
//   Noto Sans Hans, a whole school's names (1,581):     9 ms here,   67 ms hb-subset (8x slower)
// A roster embeds DejaVu regular and bold and, with one Chinese name, Noto Sans Hans: hb-subset would add ~30 ms to a
// 40-student roster rendered in ~20 ms CPU (bench:rosters), and as much to each of a whole school's rosters. It also
// renumbers glyphs in its own order, so pdfkit's glyph-to-CID bookkeeping would need a remapping layer. So these
// writers stay; bench:subset re-measures both whenever fonts or HarfBuzz change.
import type { Font } from 'fontkit';
import { LRUCache } from 'lru-cache';

/** What pdfkit's EmbeddedFont uses of a fontkit subset. */
export interface PdfkitSubset {
  includeGlyph(glyph: number | { id: number }): number;
  encode(): Uint8Array;
  /** Present (non-null) for CFF subsets: pdfkit then writes FontFile3 with Subtype CIDFontType0C. */
  cff: unknown;
}

/** Where each table of an sfnt file lies, read from the file's own table directory (not from fontkit's fields). */
type TableDirectory = Map<string, { offset: number; length: number }>;

function tableDirectory(bytes: Uint8Array): TableDirectory {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const tables: TableDirectory = new Map();
  const count = view.getUint16(4);
  for (let i = 0; i < count; i++) {
    const rec = 12 + 16 * i;
    const tag = String.fromCharCode(bytes[rec]!, bytes[rec + 1]!, bytes[rec + 2]!, bytes[rec + 3]!);
    tables.set(tag, { offset: view.getUint32(rec + 8), length: view.getUint32(rec + 12) });
  }
  return tables;
}

class GlyphList {
  readonly glyphs: number[] = [];
  private readonly mapping = new Map<number, number>();
  constructor() {
    this.include(0);
  }
  include(glyph: number | { id: number }): number {
    const id = typeof glyph === 'number' ? glyph : glyph.id;
    let gid = this.mapping.get(id);
    if (gid === undefined) {
      gid = this.glyphs.length;
      this.glyphs.push(id);
      this.mapping.set(id, gid);
    }
    return gid;
  }
}

function checksum(data: Uint8Array): number {
  const padded = new Uint8Array((data.length + 3) & ~3);
  padded.set(data);
  const view = new DataView(padded.buffer);
  let sum = 0;
  for (let i = 0; i < padded.length; i += 4) sum = (sum + view.getUint32(i)) >>> 0;
  return sum;
}

/** Writes an sfnt (TrueType) file from whole tables. */
function sfnt(tables: [string, Uint8Array][]): Uint8Array {
  tables.sort((a, b) => (a[0] < b[0] ? -1 : 1));
  const n = tables.length;
  const headerSize = 12 + 16 * n;
  let size = headerSize;
  for (const [, data] of tables) size += (data.length + 3) & ~3;
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  let pow = 1;
  let log = 0;
  while (pow * 2 <= n) {
    pow *= 2;
    log++;
  }
  view.setUint32(0, 0x00010000);
  view.setUint16(4, n);
  view.setUint16(6, pow * 16);
  view.setUint16(8, log);
  view.setUint16(10, n * 16 - pow * 16);
  let offset = headerSize;
  let headOffset = -1;
  tables.forEach(([tag, data], i) => {
    const rec = 12 + 16 * i;
    for (let c = 0; c < 4; c++) out[rec + c] = tag.charCodeAt(c);
    view.setUint32(rec + 4, checksum(data));
    view.setUint32(rec + 8, offset);
    view.setUint32(rec + 12, data.length);
    out.set(data, offset);
    if (tag === 'head') headOffset = offset;
    offset += (data.length + 3) & ~3;
  });
  if (headOffset >= 0) view.setUint32(headOffset + 8, (0xb1b0afba - checksum(out)) >>> 0);
  return out;
}

/**
 * A simple glyph without its hinting instructions. Hinting matters for screens at small sizes; printed rosters and
 * PDF viewers do without, and the instructions are about half of DejaVu's glyph bytes (to embed and compress).
 */
function withoutInstructions(glyph: Uint8Array): Uint8Array {
  const view = new DataView(glyph.buffer, glyph.byteOffset, glyph.byteLength);
  const contours = view.getInt16(0);
  const at = 10 + 2 * contours; // instructionLength follows endPtsOfContours
  if (contours <= 0 || at + 2 > glyph.length) return glyph;
  const length = view.getUint16(at);
  if (length === 0 || at + 2 + length > glyph.length) return glyph;
  const out = new Uint8Array(glyph.length - length);
  out.set(glyph.subarray(0, at), 0); // header and endPtsOfContours; instructionLength stays 0
  out.set(glyph.subarray(at + 2 + length), at + 2);
  return out;
}

/** Each glyph's offset in glyf, from the loca table (short or long, as head's indexToLocFormat says). */
function locaOffsets(loca: Uint8Array | null, head: Uint8Array): ArrayLike<number> {
  if (!loca) throw new Error('not a TrueType font: no loca table');
  const view = new DataView(loca.buffer, loca.byteOffset, loca.byteLength);
  const long = new DataView(head.buffer, head.byteOffset, head.byteLength).getInt16(50) === 1;
  const n = loca.length / (long ? 4 : 2);
  const out = new Uint32Array(n);
  for (let i = 0; i < n; i++) out[i] = long ? view.getUint32(4 * i) : 2 * view.getUint16(2 * i);
  return out;
}

class TrueTypeSubset implements PdfkitSubset {
  readonly cff = null;
  private readonly list = new GlyphList();
  private readonly tables: TableDirectory;
  private readonly bytes: Uint8Array;
  constructor(tables: TableDirectory, bytes: Uint8Array) {
    this.tables = tables;
    this.bytes = bytes;
  }

  includeGlyph(glyph: number | { id: number }): number {
    return this.list.include(glyph);
  }

  /** Rewrites the component glyph ids of a composite glyph (numberOfContours < 0) to subset ids. */
  private remapComponents(data: Uint8Array): void {
    const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
    let p = 10;
    for (;;) {
      const flags = view.getUint16(p);
      view.setUint16(p + 2, this.list.include(view.getUint16(p + 2)));
      p += 4 + (flags & 0x0001 ? 4 : 2); // ARG_1_AND_2_ARE_WORDS
      if (flags & 0x0008)
        p += 2; // WE_HAVE_A_SCALE
      else if (flags & 0x0040)
        p += 4; // WE_HAVE_AN_X_AND_Y_SCALE
      else if (flags & 0x0080) p += 8; // WE_HAVE_A_TWO_BY_TWO
      if (!(flags & 0x0020) || p + 4 > data.length) break; // MORE_COMPONENTS
    }
  }

  private table(tag: string): Uint8Array | null {
    const t = this.tables.get(tag);
    return t ? this.bytes.subarray(t.offset, t.offset + t.length) : null;
  }

  encode(): Uint8Array {
    const glyfTable = this.table('glyf');
    const head = this.table('head');
    const hhea = this.table('hhea');
    const maxp = this.table('maxp');
    const hmtxTable = this.table('hmtx');
    if (!glyfTable || !head || !hhea || !maxp || !hmtxTable) throw new Error('not a TrueType font');
    const offsets = locaOffsets(this.table('loca'), head);
    const hmtxIn = new DataView(hmtxTable.buffer, hmtxTable.byteOffset, hmtxTable.byteLength);
    const numHMetrics = new DataView(hhea.buffer, hhea.byteOffset, hhea.byteLength).getUint16(34);
    const parts: Uint8Array[] = [];
    const locas: number[] = [];
    const metrics: [number, number][] = [];
    let offset = 0;
    // Composite glyphs add their components while the loop runs.
    for (let i = 0; i < this.list.glyphs.length; i++) {
      const id = this.list.glyphs[i]!;
      let data = glyfTable.subarray(offsets[id]!, offsets[id + 1]!);
      if (data.length >= 10 && ((data[0]! << 8) | data[1]!) & 0x8000) {
        data = new Uint8Array(data);
        this.remapComponents(data);
      } else if (data.length >= 12) {
        data = withoutInstructions(data);
      }
      locas.push(offset);
      parts.push(data);
      // glyf entries are kept 4-byte aligned.
      offset += (data.length + 3) & ~3;
      const m = Math.min(id, numHMetrics - 1);
      const advance = hmtxIn.getUint16(4 * m);
      const lsb =
        id < numHMetrics
          ? hmtxIn.getInt16(4 * id + 2)
          : hmtxIn.getInt16(4 * numHMetrics + 2 * (id - numHMetrics));
      metrics.push([advance, lsb]);
    }
    locas.push(offset);
    const n = this.list.glyphs.length;

    const glyf = new Uint8Array(offset);
    let pos = 0;
    for (const p of parts) {
      glyf.set(p, pos);
      pos += (p.length + 3) & ~3;
    }
    const loca = new Uint8Array(4 * (n + 1));
    const locaView = new DataView(loca.buffer);
    locas.forEach((o, i) => {
      locaView.setUint32(4 * i, o);
    });
    const hmtx = new Uint8Array(4 * n);
    const hmtxView = new DataView(hmtx.buffer);
    metrics.forEach(([adv, lsb], i) => {
      hmtxView.setUint16(4 * i, adv);
      hmtxView.setInt16(4 * i + 2, lsb);
    });
    // Copies (a Buffer's slice() would be a view into the shared font bytes).
    const newHead = new Uint8Array(head);
    const headView = new DataView(newHead.buffer);
    headView.setUint32(8, 0); // checkSumAdjustment, set by sfnt()
    headView.setInt16(50, 1); // indexToLocFormat: long offsets
    const newHhea = new Uint8Array(hhea);
    new DataView(newHhea.buffer).setUint16(34, n); // numberOfHMetrics
    const newMaxp = new Uint8Array(maxp);
    new DataView(newMaxp.buffer).setUint16(4, n); // numGlyphs

    const tables: [string, Uint8Array][] = [
      ['head', newHead],
      ['hhea', newHhea],
      ['maxp', newMaxp],
      ['loca', loca],
      ['glyf', glyf],
      ['hmtx', hmtx],
    ];
    for (const tag of ['cvt ', 'fpgm', 'prep']) {
      const t = this.table(tag);
      if (t) tables.push([tag, t]);
    }
    return sfnt(tables);
  }
}

// --- CFF (Compact Font Format), CID-keyed -------------------------------------------------------------------

interface Index {
  count: number;
  /** Byte range [start, end) of item i, absolute in the CFF table. */
  item(i: number): [number, number];
  /** Offset just past the INDEX. */
  end: number;
}

// Offsets are read on demand: the CharStrings INDEX of a CJK font has tens of thousands of entries.
function readIndex(cff: Uint8Array, at: number): Index {
  const count = (cff[at]! << 8) | cff[at + 1]!;
  if (count === 0) return { count, item: () => [at + 2, at + 2], end: at + 2 };
  const offSize = cff[at + 2]!;
  const readOff = (i: number) => {
    let v = 0;
    const p = at + 3 + i * offSize;
    for (let b = 0; b < offSize; b++) v = v * 256 + cff[p + b]!;
    return v;
  };
  const dataStart = at + 3 + (count + 1) * offSize - 1;
  return {
    count,
    item: (i) => [dataStart + readOff(i), dataStart + readOff(i + 1)],
    end: dataStart + readOff(count),
  };
}

function writeIndex(items: Uint8Array[]): Uint8Array {
  if (items.length === 0) return new Uint8Array([0, 0]);
  let total = 1;
  for (const it of items) total += it.length;
  const offSize = total < 0x100 ? 1 : total < 0x10000 ? 2 : total < 0x1000000 ? 3 : 4;
  const out = new Uint8Array(3 + (items.length + 1) * offSize + total - 1);
  out[0] = items.length >> 8;
  out[1] = items.length & 0xff;
  out[2] = offSize;
  let off = 1;
  const writeOff = (i: number, v: number) => {
    const p = 3 + i * offSize;
    for (let b = offSize - 1; b >= 0; b--) {
      out[p + b] = v & 0xff;
      v = Math.floor(v / 256);
    }
  };
  let pos = 3 + (items.length + 1) * offSize;
  items.forEach((it, i) => {
    writeOff(i, off);
    out.set(it, pos);
    pos += it.length;
    off += it.length;
  });
  writeOff(items.length, off);
  return out;
}

/** One DICT entry: operator (12 x as 1200 + x), its integer operands, and its raw bytes. */
interface DictEntry {
  op: number;
  operands: number[];
  raw: Uint8Array;
}

function readDict(cff: Uint8Array, start: number, end: number): DictEntry[] {
  const entries: DictEntry[] = [];
  let operands: number[] = [];
  let entryStart = start;
  let p = start;
  while (p < end) {
    const b = cff[p]!;
    if (b <= 21) {
      let op = b;
      p++;
      if (b === 12) op = 1200 + cff[p++]!;
      entries.push({ op, operands, raw: cff.subarray(entryStart, p) });
      operands = [];
      entryStart = p;
    } else if (b === 28) {
      operands.push((((cff[p + 1]! << 8) | cff[p + 2]!) << 16) >> 16);
      p += 3;
    } else if (b === 29) {
      operands.push((cff[p + 1]! << 24) | (cff[p + 2]! << 16) | (cff[p + 3]! << 8) | cff[p + 4]!);
      p += 5;
    } else if (b === 30) {
      // Real number: nibbles until 0xf; only integers are needed from this dict, so record NaN.
      p++;
      while (p < end) {
        const v = cff[p++]!;
        if ((v & 0x0f) === 0x0f || (v & 0xf0) === 0xf0) break;
      }
      operands.push(Number.NaN);
    } else if (b >= 32 && b <= 246) {
      operands.push(b - 139);
      p++;
    } else if (b >= 247 && b <= 250) {
      operands.push((b - 247) * 256 + cff[p + 1]! + 108);
      p += 2;
    } else if (b >= 251 && b <= 254) {
      operands.push(-(b - 251) * 256 - cff[p + 1]! - 108);
      p += 2;
    } else {
      throw new Error(`bad CFF DICT byte ${b}`);
    }
  }
  return entries;
}

/** A DICT entry with 5-byte integer operands, so its size does not depend on the values. */
function fixedEntry(op: number, operands: number[]): Uint8Array {
  const opBytes = op >= 1200 ? [12, op - 1200] : [op];
  const out = new Uint8Array(operands.length * 5 + opBytes.length);
  const view = new DataView(out.buffer);
  operands.forEach((v, i) => {
    out[i * 5] = 29;
    view.setInt32(i * 5 + 1, v);
  });
  out.set(opBytes, operands.length * 5);
  return out;
}

function concat(parts: Uint8Array[]): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let pos = 0;
  for (const p of parts) {
    out.set(p, pos);
    pos += p.length;
  }
  return out;
}

const OP = {
  charset: 15,
  encoding: 16,
  charStrings: 17,
  private: 18,
  subrs: 19,
  ros: 1230,
  cidCount: 1234,
  fdArray: 1236,
  fdSelect: 1237,
} as const;

/** The parts of a CID-keyed CFF table a subset needs, parsed once per font. */
interface ParsedCff {
  cff: Uint8Array;
  header: Uint8Array;
  nameIndex: Uint8Array;
  stringIndex: Uint8Array;
  topEntries: DictEntry[];
  gsubrs: Index;
  charStrings: Index;
  fdSelect: (gid: number) => number;
  fonts: { entries: DictEntry[]; privateRaw: Uint8Array; privateOthers: Uint8Array[]; subrs: Index | null }[];
  /** Charstrings with their subroutines inlined, per glyph id (null: could not be flattened). */
  flat: Map<number, Uint8Array | null>;
}

function parseCff(cff: Uint8Array): ParsedCff {
  const hdrSize = cff[2]!;
  const names = readIndex(cff, hdrSize);
  const tops = readIndex(cff, names.end);
  const strings = readIndex(cff, tops.end);
  const gsubrs = readIndex(cff, strings.end);
  const [ts, te] = tops.item(0);
  const topEntries = readDict(cff, ts, te);
  const get = (op: number) => topEntries.find((e) => e.op === op)?.operands;
  const ros = get(OP.ros);
  const fdArrayAt = get(OP.fdArray)?.[0];
  const fdSelectAt = get(OP.fdSelect)?.[0];
  const charStringsAt = get(OP.charStrings)?.[0];
  if (!ros || fdArrayAt === undefined || fdSelectAt === undefined || charStringsAt === undefined) {
    throw new Error('not a CID-keyed CFF font');
  }
  const charStrings = readIndex(cff, charStringsAt);
  const nGlyphs = charStrings.count;
  // FDSelect: format 0 (one byte per glyph) or 3 (ranges).
  const format = cff[fdSelectAt]!;
  let fdSelect: (gid: number) => number;
  if (format === 0) {
    fdSelect = (gid) => cff[fdSelectAt + 1 + gid]!;
  } else if (format === 3) {
    const nRanges = (cff[fdSelectAt + 1]! << 8) | cff[fdSelectAt + 2]!;
    const firsts: number[] = [];
    const fds: number[] = [];
    for (let i = 0; i < nRanges; i++) {
      const p = fdSelectAt + 3 + i * 3;
      firsts.push((cff[p]! << 8) | cff[p + 1]!);
      fds.push(cff[p + 2]!);
    }
    fdSelect = (gid) => {
      let lo = 0;
      let hi = nRanges - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (firsts[mid]! <= gid) lo = mid;
        else hi = mid - 1;
      }
      return fds[lo]!;
    };
  } else {
    throw new Error(`unsupported FDSelect format ${format}`);
  }
  const fdArray = readIndex(cff, fdArrayAt);
  const fonts = Array.from({ length: fdArray.count }, (_, i) => fdArray.item(i)).map(([s, e]) => {
    const entries = readDict(cff, s, e);
    const priv = entries.find((x) => x.op === OP.private)?.operands;
    if (!priv || priv.length < 2) throw new Error('CFF font dict without Private');
    const [size, at] = priv as [number, number];
    const privEntries = readDict(cff, at, at + size);
    const subrsRel = privEntries.find((x) => x.op === OP.subrs)?.operands[0];
    return {
      entries,
      privateRaw: cff.subarray(at, at + size),
      // The Private DICT is rewritten with its local subrs right behind it (fonts often keep them far away).
      privateOthers: privEntries.filter((x) => x.op !== OP.subrs).map((x) => x.raw),
      subrs: subrsRel !== undefined ? readIndex(cff, at + subrsRel) : null,
    };
  });
  if (nGlyphs === 0) throw new Error('CFF font without glyphs');
  return {
    cff,
    header: cff.subarray(0, hdrSize),
    nameIndex: cff.subarray(hdrSize, names.end),
    stringIndex: cff.subarray(tops.end, strings.end),
    topEntries,
    gsubrs,
    charStrings,
    fdSelect,
    fonts,
    flat: new Map(),
  };
}

/**
 * Subrs INDEX with the same count (subr numbers are biased by it) but unused subrs reduced to `return`. Written in
 * one pass: CJK fonts have thousands of local subrs per font dict.
 */
function subsetSubrs(cff: Uint8Array, index: Index, used: Set<number>): Uint8Array {
  const count = index.count;
  if (count === 0) return new Uint8Array([0, 0]);
  let total = 1;
  for (let i = 0; i < count; i++) {
    if (used.has(i)) {
      const [s, e] = index.item(i);
      total += e - s;
    } else total += 1;
  }
  const offSize = total < 0x100 ? 1 : total < 0x10000 ? 2 : total < 0x1000000 ? 3 : 4;
  const dataStart = 3 + (count + 1) * offSize;
  const out = new Uint8Array(dataStart + total - 1);
  out[0] = count >> 8;
  out[1] = count & 0xff;
  out[2] = offSize;
  let off = 1;
  let pos = dataStart;
  for (let i = 0; i <= count; i++) {
    let p = 3 + i * offSize + offSize - 1;
    for (let v = off, b = 0; b < offSize; b++, v = Math.floor(v / 256)) out[p--] = v & 0xff;
    if (i === count) break;
    if (used.has(i)) {
      const [s, e] = index.item(i);
      out.set(cff.subarray(s, e), pos);
      pos += e - s;
      off += e - s;
    } else {
      out[pos++] = 11; // return
      off += 1;
    }
  }
  return out;
}

function subrBias(count: number): number {
  return count < 1240 ? 107 : count < 33900 ? 1131 : 32768;
}

/**
 * Inlines every subroutine call of a Type 2 charstring, so the subset needs no subroutines at all (CJK fonts carry
 * tens of thousands, which would otherwise travel as placeholders in every PDF). Returns null for a charstring
 * this does not understand (a computed subr number, runaway nesting); the caller then keeps the subroutines.
 */
function flattenCharstring(
  cff: Uint8Array,
  cs: Uint8Array,
  gsubrs: Index,
  lsubrs: Index | null,
): Uint8Array | null {
  const out: number[] = [];
  let stack = 0;
  let stems = 0;
  let lastNumberAt = -1;
  let lastNumber = 0;
  let ended = false;
  const gBias = subrBias(gsubrs.count);
  const lBias = lsubrs ? subrBias(lsubrs.count) : 0;

  const run = (bytes: Uint8Array, depth: number): boolean => {
    if (depth > 10) return false;
    let i = 0;
    while (i < bytes.length && !ended) {
      const b = bytes[i]!;
      if (b >= 32 || b === 28) {
        const len = b === 28 ? 3 : b <= 246 ? 1 : b <= 254 ? 2 : 5;
        lastNumberAt = out.length;
        if (b === 28) lastNumber = (((bytes[i + 1]! << 8) | bytes[i + 2]!) << 16) >> 16;
        else if (b <= 246) lastNumber = b - 139;
        else if (b <= 250) lastNumber = (b - 247) * 256 + bytes[i + 1]! + 108;
        else if (b <= 254) lastNumber = -(b - 251) * 256 - bytes[i + 1]! - 108;
        else lastNumber = Number.NaN; // 16.16 fixed: never a subr number
        for (let k = 0; k < len; k++) out.push(bytes[i + k]!);
        i += len;
        stack++;
        continue;
      }
      if (b === 10 || b === 29) {
        // callsubr / callgsubr: the subr number is the number just pushed.
        if (lastNumberAt !== out.length - numberLength(out, lastNumberAt) || !Number.isInteger(lastNumber))
          return false;
        out.length = lastNumberAt;
        lastNumberAt = -1;
        stack--;
        const index = b === 10 ? lsubrs : gsubrs;
        if (!index) return false;
        const n = lastNumber + (b === 10 ? lBias : gBias);
        if (n < 0 || n >= index.count) return false;
        const [s, e] = index.item(n);
        if (!run(cff.subarray(s, e), depth + 1)) return false;
        i++;
        continue;
      }
      if (b === 11) return true; // return: back to the caller
      lastNumberAt = -1;
      if (b === 1 || b === 3 || b === 18 || b === 23) {
        stems += stack >> 1;
        stack = 0;
        out.push(b);
        i++;
      } else if (b === 19 || b === 20) {
        // hintmask / cntrmask: pending numbers are an implicit vstem; the mask has a bit per stem.
        stems += stack >> 1;
        stack = 0;
        const maskBytes = (stems + 7) >> 3;
        for (let k = 0; k <= maskBytes; k++) out.push(bytes[i + k]!);
        i += 1 + maskBytes;
      } else if (b === 12) {
        out.push(b, bytes[i + 1]!);
        stack = 0;
        i += 2;
      } else {
        out.push(b);
        stack = 0;
        i++;
        if (b === 14) ended = true; // endchar ends the glyph, wherever it is
      }
    }
    return true;
  };
  if (!run(cs, 0) || !ended) return null;
  return Uint8Array.from(out);
}

/** Byte length of the number token written at `at` in `out` (0 when `at` is not a token start). */
function numberLength(out: number[], at: number): number {
  if (at < 0) return 0;
  const b = out[at]!;
  return b === 28 ? 3 : b >= 32 && b <= 246 ? 1 : b >= 247 && b <= 254 ? 2 : b === 255 ? 5 : 0;
}

class CffSubset implements PdfkitSubset {
  readonly cff = true;
  private readonly list = new GlyphList();
  private readonly parsed: ParsedCff;
  constructor(parsed: ParsedCff) {
    this.parsed = parsed;
  }

  includeGlyph(glyph: number | { id: number }): number {
    return this.list.include(glyph);
  }

  encode(): Uint8Array {
    return this.encodeFlat() ?? this.encodeWithSubrs();
  }

  /** The subset with every charstring flattened and no subroutines; null when a glyph cannot be flattened. */
  private encodeFlat(): Uint8Array | null {
    const p = this.parsed;
    const charStrings: Uint8Array[] = [];
    const fdMap = new Map<number, number>();
    const fdOfGlyph: number[] = [];
    for (const id of this.list.glyphs) {
      const fd = p.fdSelect(id);
      let flat = p.flat.get(id);
      if (flat === undefined) {
        const [s, e] = p.charStrings.item(id);
        flat = flattenCharstring(p.cff, p.cff.subarray(s, e), p.gsubrs, p.fonts[fd]?.subrs ?? null);
        p.flat.set(id, flat);
      }
      if (!flat) return null;
      charStrings.push(flat);
      let newFd = fdMap.get(fd);
      if (newFd === undefined) {
        newFd = fdMap.size;
        fdMap.set(fd, newFd);
      }
      fdOfGlyph.push(newFd);
    }
    const privates = [...fdMap.keys()].map((fd) => {
      const f = p.fonts[fd]!;
      const bytes = concat(f.privateOthers);
      return { dictSize: bytes.length, bytes };
    });
    return this.assemble(new Uint8Array([0, 0]), charStrings, fdMap, fdOfGlyph, privates);
  }

  /** The subset keeping the subroutines (unused ones reduced to `return`). */
  private encodeWithSubrs(): Uint8Array {
    const p = this.parsed;
    const { cff } = p;
    const glyphs = this.list.glyphs;
    const gsubrsUsed = new Set<number>();
    const fdMap = new Map<number, number>();
    const localUsed: Set<number>[] = [];
    const fdOfGlyph: number[] = [];
    const charStrings: Uint8Array[] = [];
    for (const id of glyphs) {
      const fd = p.fdSelect(id);
      let newFd = fdMap.get(fd);
      if (newFd === undefined) {
        newFd = fdMap.size;
        fdMap.set(fd, newFd);
        localUsed.push(new Set());
      }
      fdOfGlyph.push(newFd);
      const [s, e] = p.charStrings.item(id);
      charStrings.push(cff.subarray(s, e));
    }
    // Which subroutines a glyph calls would take interpreting its charstring (fontkit keeps that in private fields):
    // this path runs only when flattening failed, so it keeps them all, a larger subset rather than a wrong one.
    const all = (index: Index) => new Set(Array.from({ length: index.count }, (_, i) => i));
    for (const i of all(p.gsubrs)) gsubrsUsed.add(i);
    [...fdMap.keys()].forEach((fd, i) => {
      const subrs = p.fonts[fd]?.subrs;
      if (subrs) localUsed[i] = all(subrs);
    });

    const gsubrIndex = subsetSubrs(cff, p.gsubrs, gsubrsUsed);
    const usedFonts = [...fdMap.keys()].map((fd) => p.fonts[fd]!);
    // Each Private DICT with its Subrs operand (fixed size) pointing just past itself, then the subset subrs.
    const privates = usedFonts.map((f, i) => {
      if (!f.subrs) return { dictSize: f.privateRaw.length, bytes: f.privateRaw };
      const dictSize = f.privateOthers.reduce((n, r) => n + r.length, 0) + 6;
      const dict = concat([...f.privateOthers, fixedEntry(OP.subrs, [dictSize])]);
      return { dictSize, bytes: concat([dict, subsetSubrs(cff, f.subrs, localUsed[i]!)]) };
    });
    return this.assemble(gsubrIndex, charStrings, fdMap, fdOfGlyph, privates);
  }

  private assemble(
    gsubrIndex: Uint8Array,
    charStrings: Uint8Array[],
    fdMap: Map<number, number>,
    fdOfGlyph: number[],
    privates: { dictSize: number; bytes: Uint8Array }[],
  ): Uint8Array {
    const p = this.parsed;
    const n = charStrings.length;
    // CID i is glyph i (format 2: one range from CID 1); a font of .notdef alone has an empty format 0 charset.
    const charset = n > 1 ? new Uint8Array([2, 0, 1, (n - 2) >> 8, (n - 2) & 0xff]) : new Uint8Array([0]);
    const fdSelect = new Uint8Array(1 + n);
    fdOfGlyph.forEach((fd, i) => {
      fdSelect[i + 1] = fd;
    });
    const charStringIndex = writeIndex(charStrings);
    const usedFonts = [...fdMap.keys()].map((fd) => p.fonts[fd]!);

    const skip = new Set<number>([
      OP.charset,
      OP.encoding,
      OP.charStrings,
      OP.private,
      OP.cidCount,
      OP.fdArray,
      OP.fdSelect,
    ]);
    // ROS must come first in a CID font's Top DICT.
    const ros = p.topEntries.find((e) => e.op === OP.ros)!.raw;
    const kept = p.topEntries.filter((e) => !skip.has(e.op) && e.op !== OP.ros).map((e) => e.raw);
    // Offsets are written as 5-byte integers, so the Top DICT's size is known before the offsets are:
    // charset and CharStrings take 5 + 1 bytes, CIDCount, FDSelect and FDArray 5 + 2.
    const topSizeExact = ros.length + kept.reduce((s, r) => s + r.length, 0) + 6 + 6 + 7 + 7 + 7;
    const topIndexSize = writeIndex([new Uint8Array(topSizeExact)]).length;

    let at = p.header.length + p.nameIndex.length + topIndexSize + p.stringIndex.length + gsubrIndex.length;
    const charsetAt = at;
    at += charset.length;
    const fdSelectAt = at;
    at += fdSelect.length;
    const charStringsAt = at;
    at += charStringIndex.length;
    const fdArrayAt = at;
    // Font dicts: their entries minus Private, plus Private with fixed-size operands.
    const fontDictSizes = usedFonts.map(
      (f) => f.entries.filter((e) => e.op !== OP.private).reduce((s, e) => s + e.raw.length, 0) + 11,
    );
    const fdArraySize = writeIndex(fontDictSizes.map((s) => new Uint8Array(s))).length;
    at += fdArraySize;
    const fontDicts = usedFonts.map((f, i) => {
      const privAt = at;
      at += privates[i]!.bytes.length;
      return concat([
        ...f.entries.filter((e) => e.op !== OP.private).map((e) => e.raw),
        fixedEntry(OP.private, [privates[i]!.dictSize, privAt]),
      ]);
    });
    const topDict = concat([
      ros,
      ...kept,
      fixedEntry(OP.charset, [charsetAt]),
      fixedEntry(OP.charStrings, [charStringsAt]),
      fixedEntry(OP.cidCount, [n]),
      fixedEntry(OP.fdSelect, [fdSelectAt]),
      fixedEntry(OP.fdArray, [fdArrayAt]),
    ]);
    if (topDict.length !== topSizeExact) throw new Error('CFF top dict size mismatch');
    return concat([
      p.header,
      p.nameIndex,
      writeIndex([topDict]),
      p.stringIndex,
      gsubrIndex,
      charset,
      fdSelect,
      charStringIndex,
      writeIndex(fontDicts),
      ...privates.map((x) => x.bytes),
    ]);
  }
}

interface GlyphRunLike {
  glyphs: unknown[];
  positions: Record<string, number>[];
}

const LAYOUT_CACHE_LIMIT = 50_000;

/**
 * Wraps a fontkit font for pdfkit: subsets with the writers above, and a process-wide cache of text layout (pdfkit's
 * own layout cache lives and dies with each document, and shaping through the GSUB tables is the costliest step of
 * drawing text). pdfkit scales the positions of a run in place, so each call gets its own copy of the cached run.
 * Everything else (metrics, tables, glyphs) is the fontkit font's own, through the prototype chain.
 */
export function forPdfkit(font: Font, bytes: Uint8Array): Font {
  // A plain Uint8Array view: the writers only read it, and must never write through a Buffer's slice().
  const fileBytes = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let make: (() => PdfkitSubset) | null = null;
  const tables = tableDirectory(fileBytes);
  const cffTable = tables.get('CFF ');
  if (cffTable) {
    let parsed: ParsedCff | null = null;
    try {
      parsed = parseCff(fileBytes.subarray(cffTable.offset, cffTable.offset + cffTable.length));
    } catch {
      // Not a CID-keyed CFF: fontkit's own (slower) subsetter handles it.
    }
    if (parsed) {
      const p = parsed;
      make = () => new CffSubset(p);
    }
  } else if (tables.has('glyf')) {
    make = () => new TrueTypeSubset(tables, fileBytes);
  }
  const wrapper = Object.create(font) as Font;
  if (make) Object.defineProperty(wrapper, 'createSubset', { value: make });
  const cache = new LRUCache<string, GlyphRunLike>({ max: LAYOUT_CACHE_LIMIT });
  const layout = font.layout;
  Object.defineProperty(wrapper, 'layout', {
    value(this: Font, text: string, ...rest: unknown[]) {
      if (rest.length > 0 && rest.some((r) => r !== undefined)) {
        return (layout as (...a: unknown[]) => unknown).call(this, text, ...rest);
      }
      let run = cache.get(text);
      if (!run) {
        run = layout.call(this, text) as unknown as GlyphRunLike;
        cache.set(text, run);
      }
      const copy = Object.assign(Object.create(Object.getPrototypeOf(run)), run) as GlyphRunLike;
      copy.glyphs = run.glyphs.slice();
      copy.positions = run.positions.map((p) => ({ ...p }));
      return copy;
    },
  });
  return wrapper;
}
