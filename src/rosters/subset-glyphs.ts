// What the font subsetters (subset.ts for TrueType, subset-cff.ts for CID-keyed CFF) share: the part of a subset
// pdfkit uses, and the glyph list that numbers a subset's glyphs in order of use, .notdef first, as fontkit does.

/** What pdfkit's EmbeddedFont uses of a fontkit subset. */
export interface PdfkitSubset {
  includeGlyph(glyph: number | { id: number }): number;
  encode(): Uint8Array;
  /** Present (non-null) for CFF subsets: pdfkit then writes FontFile3 with Subtype CIDFontType0C. */
  cff: unknown;
}

/** A subset's glyphs: new ids in order of first use, glyph 0 (.notdef) first. */
export class GlyphList {
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
