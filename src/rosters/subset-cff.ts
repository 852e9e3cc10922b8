// The CID-keyed CFF (Compact Font Format) writer of subset.ts: parses a font's CFF table once, then writes each
// subset as a bare CID-keyed CFF for pdfkit's FontFile3/CIDFontType0C: the subset's charstrings with their
// subroutine calls inlined where it can, else with the subroutines they use. subset.ts says why it is ours.
import { GlyphList, type PdfkitSubset } from './subset-glyphs.ts';

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
export interface ParsedCff {
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

export function parseCff(cff: Uint8Array): ParsedCff {
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

export class CffSubset implements PdfkitSubset {
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
