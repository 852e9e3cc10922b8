// The roster fonts, parsed once per process and shared by every document.
// pdfkit's built-in fonts are WinAnsi only and it has no font fallback, so each text run is drawn with the first
// face that has glyphs for it: DejaVu Sans (Latin incl. Vietnamese, Greek, Cyrillic, Arabic, Hebrew) and
// Noto Sans Hans (Chinese, GB2312 set). Both ship through npm packages with their licences (SIL OFL 1.1 for Noto;
// the Bitstream Vera/DejaVu licence for DejaVu). pdfkit accepts a parsed fontkit font and subsets it per document.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { create, type Font } from 'fontkit';
import PDFDocument from 'pdfkit';
import { forPdfkit } from './subset.ts';

export type Weight = 'regular' | 'bold';

/** One font face as the text layout sees it. */
export interface Face {
  /** Name the face is registered under in each pdfkit document; unique across font sets. */
  key: string;
  /** Advance width of a run at 1 pt. */
  measure(text: string): number;
  /** Ascent as a fraction of the font size. */
  ascent: number;
}

/** The faces a document draws with: a fallback chain per weight. */
export interface FontSet {
  name: string;
  /** The face to draw a code point with. */
  faceFor(codePoint: number, weight: Weight): Face;
  /** The face for spaces and metrics. */
  primary(weight: Weight): Face;
  /** True when some face can draw the code point. */
  canDraw(codePoint: number, weight: Weight): boolean;
  /** Makes the faces known to one document. */
  register(doc: PDFKit.PDFDocument): void;
}

const require = createRequire(import.meta.url);
const dejavuDir = join(dirname(require.resolve('dejavu-fonts-ttf/package.json')), 'ttf');
// @embedpdf/fonts-sc exports only its JS entry; the fonts sit beside its dist folder.
const notoHansDir = join(dirname(require.resolve('@embedpdf/fonts-sc')), '..', 'fonts');

/** Where each font file comes from and under which licence. */
export const fontSources = [
  {
    package: 'dejavu-fonts-ttf',
    files: ['DejaVuSans.ttf', 'DejaVuSans-Bold.ttf'],
    licence: 'Bitstream Vera / DejaVu fonts licence (permissive, see node_modules/dejavu-fonts-ttf/LICENSE)',
  },
  {
    package: '@embedpdf/fonts-sc',
    files: ['NotoSansHans-Regular.otf', 'NotoSansHans-Bold.otf'],
    licence: 'SIL Open Font License 1.1 (see node_modules/@embedpdf/fonts-sc/LICENSE)',
  },
] as const;

interface FontkitFace extends Face {
  file: string;
  font: Font | null;
}

function fontkitFace(key: string, file: string): FontkitFace {
  const face: FontkitFace = {
    key,
    file,
    font: null,
    ascent: 0,
    measure(text) {
      const font = loadFace(face);
      return font.layout(text).advanceWidth / font.unitsPerEm;
    },
  };
  return face;
}

function loadFace(face: FontkitFace): Font {
  if (!face.font) {
    const bytes = readFileSync(face.file);
    // fontkit.create returns a collection only for .ttc/.dfont files; these are single fonts.
    const font = forPdfkit(create(bytes) as Font, bytes);
    face.font = font;
    face.ascent = font.ascent / font.unitsPerEm;
  }
  return face.font;
}

function chainSet(name: string, chains: Record<Weight, FontkitFace[]>): FontSet {
  const picks: Record<Weight, Map<number, Face>> = { regular: new Map(), bold: new Map() };
  const primary = (weight: Weight): Face => {
    const face = chains[weight][0]!;
    loadFace(face);
    return face;
  };
  return {
    name,
    primary,
    faceFor(codePoint, weight) {
      const cache = picks[weight];
      let picked = cache.get(codePoint);
      if (!picked) {
        picked = chains[weight].find((f) => loadFace(f).hasGlyphForCodePoint(codePoint)) ?? primary(weight);
        cache.set(codePoint, picked);
      }
      return picked;
    },
    canDraw(codePoint, weight) {
      return chains[weight].some((f) => loadFace(f).hasGlyphForCodePoint(codePoint));
    },
    register(doc) {
      for (const chain of Object.values(chains)) {
        for (const face of chain) {
          // pdfkit (>= 0.17) takes a parsed fontkit font (it checks for `layout`) and creates the per-document
          // subset only when the face is first used; @types/pdfkit does not know that overload yet.
          doc.registerFont(face.key, loadFace(face) as unknown as PDFKit.Mixins.PDFFontSource);
        }
      }
    },
  };
}

/** Embedded Unicode fonts: what every roster uses. */
export const unicodeFonts: FontSet = chainSet('unicode', {
  regular: [
    fontkitFace('rc-dejavu', join(dejavuDir, 'DejaVuSans.ttf')),
    fontkitFace('rc-noto-hans', join(notoHansDir, 'NotoSansHans-Regular.otf')),
  ],
  bold: [
    fontkitFace('rc-dejavu-bold', join(dejavuDir, 'DejaVuSans-Bold.ttf')),
    fontkitFace('rc-noto-hans-bold', join(notoHansDir, 'NotoSansHans-Bold.otf')),
  ],
});

/**
 * pdfkit's built-in Helvetica, not embedded. WinAnsi only: names in other scripts print wrong. It exists as the
 * benchmark's baseline (the same table with no embedded fonts), never for real rosters.
 */
export function standardFonts(): FontSet {
  // Measuring goes through a scratch document: pdfkit exposes the AFM metrics only through a document.
  const scratch = new PDFDocument({ autoFirstPage: false });
  const face = (key: 'Helvetica' | 'Helvetica-Bold'): Face => {
    scratch.font(key).fontSize(1);
    return {
      key,
      ascent: 0.718,
      measure: (text) => scratch.font(key).fontSize(1).widthOfString(text),
    };
  };
  const faces: Record<Weight, Face> = { regular: face('Helvetica'), bold: face('Helvetica-Bold') };
  return {
    name: 'standard',
    faceFor: (_cp, weight) => faces[weight],
    primary: (weight) => faces[weight],
    canDraw: (cp) => cp < 0x100,
    register() {},
  };
}

/** Parses every face now, so the first roster of a process does not pay for it (server start, benchmarks). */
export function preloadFonts(set: FontSet = unicodeFonts): void {
  for (const weight of ['regular', 'bold'] as const) {
    set.primary(weight);
    set.canDraw(0x4e00, weight);
  }
}
