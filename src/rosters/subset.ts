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
import { CffSubset, type ParsedCff, parseCff } from './subset-cff.ts';
import { GlyphList, type PdfkitSubset } from './subset-glyphs.ts';

export type { PdfkitSubset };

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
