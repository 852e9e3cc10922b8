// The roster fonts, parsed once per process and shared by every document.
// pdfkit's built-in fonts are WinAnsi only and it has no font fallback, so each text run is drawn with the first
// face of a fallback chain that has glyphs for it. Every face ships through an npm package with its licence:
//   DejaVu Sans (dejavu-fonts-ttf): Latin incl. Vietnamese, Greek, Cyrillic, Arabic, Hebrew; DejaVu licence.
//   Noto Sans Thai, Noto Sans Devanagari (@expo-google-fonts/*): SIL OFL 1.1.
//   Noto Sans Hans / JP / KR (@embedpdf/fonts-sc, -jp, -kr; CID-keyed OpenType CFF): SIL OFL 1.1.
// pdfkit accepts a parsed fontkit font and subsets it per document (see subset.ts for why we subset ourselves).
// The large CJK faces are read from disk only when a name first needs them.
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

/** A hint from the surrounding text: Han characters in a name with kana are drawn with the Japanese face. */
export type Lang = 'ja' | null;

/** The faces a document draws with: a fallback chain per weight. */
export interface FontSet {
  name: string;
  /** The face to draw a code point with. */
  faceFor(codePoint: number, weight: Weight, lang?: Lang): Face;
  /** The face for spaces and metrics. */
  primary(weight: Weight): Face;
  /** True when some face can draw the code point. */
  canDraw(codePoint: number, weight: Weight): boolean;
  /** Makes a face known to a document before its first use there (cheap; idempotent). */
  use(doc: PDFKit.PDFDocument, face: Face): void;
}

const require = createRequire(import.meta.url);
const dejavuDir = join(dirname(require.resolve('dejavu-fonts-ttf/package.json')), 'ttf');
// The @embedpdf packages export only their JS entry; the fonts sit beside its dist folder.
const embedpdf = (pkg: string) => join(dirname(require.resolve(pkg)), '..', 'fonts');
const expo = (pkg: string) => dirname(require.resolve(`${pkg}/package.json`));

/** Where each font file comes from and under which licence. */
export const fontSources = [
  {
    package: 'dejavu-fonts-ttf',
    files: ['DejaVuSans.ttf', 'DejaVuSans-Bold.ttf'],
    licence: 'DejaVu fonts licence (Bitstream Vera derivative, free), node_modules/dejavu-fonts-ttf/LICENSE',
  },
  {
    package: '@expo-google-fonts/noto-sans-thai',
    files: ['NotoSansThai_400Regular.ttf', 'NotoSansThai_700Bold.ttf'],
    licence: 'SIL Open Font License 1.1, node_modules/@expo-google-fonts/noto-sans-thai/LICENSE_FONT',
  },
  {
    package: '@expo-google-fonts/noto-sans-devanagari',
    files: ['NotoSansDevanagari_400Regular.ttf', 'NotoSansDevanagari_700Bold.ttf'],
    licence: 'SIL Open Font License 1.1, node_modules/@expo-google-fonts/noto-sans-devanagari/LICENSE_FONT',
  },
  {
    package: '@embedpdf/fonts-sc',
    files: ['NotoSansHans-Regular.otf', 'NotoSansHans-Bold.otf'],
    licence: 'SIL Open Font License 1.1, node_modules/@embedpdf/fonts-sc/LICENSE',
  },
  {
    package: '@embedpdf/fonts-jp',
    files: ['NotoSansJP-Regular.otf', 'NotoSansJP-Bold.otf'],
    licence: 'SIL Open Font License 1.1, node_modules/@embedpdf/fonts-jp/LICENSE',
  },
  {
    package: '@embedpdf/fonts-kr',
    files: ['NotoSansKR-Regular.otf', 'NotoSansKR-Bold.otf'],
    licence: 'SIL Open Font License 1.1, node_modules/@embedpdf/fonts-kr/LICENSE',
  },
] as const;

/** What pdfkit is handed for a parsed font file: ours subsets with subset.ts (forPdfkit). */
export type FontWrap = (font: Font, bytes: Uint8Array) => Font;

interface FontkitFace extends Face {
  file: string;
  font: Font | null;
  wrap: FontWrap;
}

function fontkitFace(key: string, file: string, wrap: FontWrap): FontkitFace {
  const face: FontkitFace = {
    key,
    file,
    wrap,
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
    const font = face.wrap(create(bytes) as Font, bytes);
    face.font = font;
    face.ascent = font.ascent / font.unitsPerEm;
  }
  return face.font;
}

function chainSet(
  name: string,
  chains: Record<Weight, FontkitFace[]>,
  japanese: Record<Weight, FontkitFace>,
): FontSet {
  const picks = new Map<string, Map<number, Face>>();
  const registered = new WeakMap<PDFKit.PDFDocument, Set<string>>();
  const primary = (weight: Weight): Face => {
    const face = chains[weight][0]!;
    loadFace(face);
    return face;
  };
  const chainFor = (weight: Weight, lang: Lang): FontkitFace[] =>
    lang === 'ja' ? [chains[weight][0]!, japanese[weight], ...chains[weight].slice(1)] : chains[weight];
  return {
    name,
    primary,
    faceFor(codePoint, weight, lang = null) {
      const key = `${weight}|${lang ?? ''}`;
      let cache = picks.get(key);
      if (!cache) {
        cache = new Map();
        picks.set(key, cache);
      }
      let picked = cache.get(codePoint);
      if (!picked) {
        picked =
          chainFor(weight, lang).find((f) => loadFace(f).hasGlyphForCodePoint(codePoint)) ?? primary(weight);
        cache.set(codePoint, picked);
      }
      return picked;
    },
    canDraw(codePoint, weight) {
      return chains[weight].some((f) => loadFace(f).hasGlyphForCodePoint(codePoint));
    },
    use(doc, face) {
      let keys = registered.get(doc);
      if (!keys) {
        keys = new Set();
        registered.set(doc, keys);
      }
      if (keys.has(face.key)) return;
      // pdfkit (>= 0.17) takes a parsed fontkit font (it checks for `layout`) and creates the per-document
      // subset only when the face is first drawn; @types/pdfkit does not know that overload yet.
      doc.registerFont(face.key, loadFace(face as FontkitFace) as unknown as PDFKit.Mixins.PDFFontSource);
      keys.add(face.key);
    },
  };
}

const thai = expo('@expo-google-fonts/noto-sans-thai');
const deva = expo('@expo-google-fonts/noto-sans-devanagari');
const sc = embedpdf('@embedpdf/fonts-sc');
const jp = embedpdf('@embedpdf/fonts-jp');
const kr = embedpdf('@embedpdf/fonts-kr');

/**
 * The embedded Unicode faces as one font set, each font handed to pdfkit through `wrap`; `prefix` keeps its keys
 * apart from another set's (bench:rosters draws the same faces through a library's subsetter beside ours).
 */
export function unicodeFontSet(name: string, wrap: FontWrap, prefix = 'rc'): FontSet {
  const faces = FALLBACK.map(([key, regular, bold]) => ({
    regular: fontkitFace(`${prefix}-${key}`, regular, wrap),
    bold: fontkitFace(`${prefix}-${key}-bold`, bold, wrap),
  }));
  const japanese = faces[FALLBACK.findIndex(([key]) => key === 'noto-jp')]!;
  return chainSet(name, { regular: faces.map((f) => f.regular), bold: faces.map((f) => f.bold) }, japanese);
}

/** The fallback chain, in order: a face's key, then its regular and bold files. */
const FALLBACK: readonly (readonly [key: string, regular: string, bold: string])[] = [
  ['dejavu', join(dejavuDir, 'DejaVuSans.ttf'), join(dejavuDir, 'DejaVuSans-Bold.ttf')],
  [
    'noto-thai',
    join(thai, '400Regular', 'NotoSansThai_400Regular.ttf'),
    join(thai, '700Bold', 'NotoSansThai_700Bold.ttf'),
  ],
  [
    'noto-deva',
    join(deva, '400Regular', 'NotoSansDevanagari_400Regular.ttf'),
    join(deva, '700Bold', 'NotoSansDevanagari_700Bold.ttf'),
  ],
  ['noto-hans', join(sc, 'NotoSansHans-Regular.otf'), join(sc, 'NotoSansHans-Bold.otf')],
  ['noto-jp', join(jp, 'NotoSansJP-Regular.otf'), join(jp, 'NotoSansJP-Bold.otf')],
  ['noto-kr', join(kr, 'NotoSansKR-Regular.otf'), join(kr, 'NotoSansKR-Bold.otf')],
];

/** Embedded Unicode fonts: what every roster uses. */
export const unicodeFonts: FontSet = unicodeFontSet('unicode', forPdfkit);

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
    use() {},
  };
}

/** Parses every face now, so the first roster of a process does not pay for it (server start, benchmarks). */
export function preloadFonts(set: FontSet = unicodeFonts): void {
  for (const weight of ['regular', 'bold'] as const) {
    set.primary(weight);
    // A code point no face has walks the whole chain.
    set.canDraw(0x10ffff, weight);
  }
}
