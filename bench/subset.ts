// npm run bench:subset — the roster font subsetter (src/rosters/subset.ts) against HarfBuzz's hb-subset (harfbuzzjs,
// WebAssembly), per document: the glyphs of a 40-student roster (names in every script), and of a whole school's
// names at once, from DejaVu Sans (TrueType) and Noto Sans Hans (CID-keyed CFF). HarfBuzz gets its best case: the
// font is copied into WebAssembly memory and its face made once, outside the timing; each subset then creates an
// input, adds the glyph ids and subsets. Medians of 30 runs after 5 warm-ups, interleaved.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { create, type Font } from 'fontkit';
import { forPdfkit } from '../src/rosters/subset.ts';
import { multiScriptNames, sampleTeam } from '../test/rosters/sample-data.ts';

const require = createRequire(import.meta.url);
const RUNS = 30;
const WARMUP = 5;

interface Hb {
  memory: { buffer: ArrayBuffer };
  malloc(n: number): number;
  free(p: number): void;
  hb_blob_create(data: number, length: number, mode: number, user: number, destroy: number): number;
  hb_blob_destroy(b: number): void;
  hb_blob_get_length(b: number): number;
  hb_face_create(blob: number, index: number): number;
  hb_face_destroy(f: number): void;
  hb_face_reference_blob(f: number): number;
  hb_subset_input_create_or_fail(): number;
  hb_subset_input_destroy(i: number): void;
  hb_subset_input_glyph_set(i: number): number;
  hb_set_add(s: number, v: number): void;
  hb_subset_or_fail(face: number, input: number): number;
}

// Node's WebAssembly global; this project's TypeScript libraries (no DOM) do not declare it.
const wasmApi = (
  globalThis as unknown as {
    WebAssembly: {
      Module: new (bytes: Uint8Array) => object;
      Instance: new (module: object, imports: object) => { exports: unknown };
    };
  }
).WebAssembly;

function harfbuzz(): Hb {
  const wasm = readFileSync(join(dirname(require.resolve('harfbuzzjs')), 'harfbuzz-subset.wasm'));
  return new wasmApi.Instance(new wasmApi.Module(wasm), {}).exports as Hb;
}

function median(xs: number[]): number {
  const s = xs.slice().sort((a, b) => a - b);
  return s[s.length >> 1]!;
}

function fontFile(pkg: string, ...rest: string[]): string {
  if (pkg === 'dejavu-fonts-ttf') return join(dirname(require.resolve(`${pkg}/package.json`)), ...rest);
  return join(dirname(require.resolve(pkg)), '..', ...rest);
}

/** Glyph ids the text needs in the font, as pdfkit's layout would ask for them. */
function glyphsOf(font: Font, text: string): number[] {
  const ids = new Set<number>();
  for (const word of text.split(/\s+/)) for (const g of font.layout(word).glyphs) ids.add(g.id);
  return [...ids];
}

function measure(label: string, file: string, text: string, hb: Hb) {
  const bytes = readFileSync(file);
  const font = forPdfkit(create(bytes) as Font, bytes);
  const glyphs = glyphsOf(font, text);
  // HarfBuzz's face, made once.
  const ptr = hb.malloc(bytes.length);
  new Uint8Array(hb.memory.buffer).set(bytes, ptr);
  const blob = hb.hb_blob_create(ptr, bytes.length, 2 /* writable */, 0, 0);
  const face = hb.hb_face_create(blob, 0);
  hb.hb_blob_destroy(blob);
  const ours: number[] = [];
  const theirs: number[] = [];
  let oursBytes = 0;
  let theirBytes = 0;
  for (let i = 0; i < WARMUP + RUNS; i++) {
    let t = performance.now();
    const subset = (
      font as unknown as { createSubset(): { includeGlyph(g: number): number; encode(): Uint8Array } }
    ).createSubset();
    for (const g of glyphs) subset.includeGlyph(g);
    oursBytes = subset.encode().length;
    const a = performance.now() - t;
    t = performance.now();
    const input = hb.hb_subset_input_create_or_fail();
    const set = hb.hb_subset_input_glyph_set(input);
    for (const g of glyphs) hb.hb_set_add(set, g);
    const out = hb.hb_subset_or_fail(face, input);
    hb.hb_subset_input_destroy(input);
    const outBlob = hb.hb_face_reference_blob(out);
    theirBytes = hb.hb_blob_get_length(outBlob);
    hb.hb_blob_destroy(outBlob);
    hb.hb_face_destroy(out);
    const b = performance.now() - t;
    if (i >= WARMUP) {
      ours.push(a);
      theirs.push(b);
    }
  }
  hb.hb_face_destroy(face);
  hb.free(ptr);
  console.log(
    `${label.padEnd(40)} ${String(glyphs.length).padStart(5)} glyphs | ours ${median(ours).toFixed(2).padStart(7)} ms, ${(oursBytes / 1024).toFixed(0).padStart(5)} KB | hb-subset ${median(theirs).toFixed(2).padStart(7)} ms, ${(theirBytes / 1024).toFixed(0).padStart(5)} KB | ratio ${(median(theirs) / median(ours)).toFixed(1)}`,
  );
}

const hb = harfbuzz();
const roster = sampleTeam(40)
  .students.map((s) => `${s.firstName} ${s.lastName}`)
  .join(' ');
// A whole school's names in one document: every sample name, and CJK given names by the hundred.
const han = Array.from({ length: 1500 }, (_, i) => String.fromCodePoint(0x4e00 + ((i * 37) % 20000))).join(
  ' ',
);
const school = `${roster} ${multiScriptNames.map((n) => `${n.first} ${n.last}`).join(' ')} ${han}`;
const labels = 'Team roster Attendance sheet Name Year Position Captain Boarder Page of Generated 0123456789';
const dejavu = fontFile('dejavu-fonts-ttf', 'ttf', 'DejaVuSans.ttf');
const hans = fontFile('@embedpdf/fonts-sc', 'fonts', 'NotoSansHans-Regular.otf');
measure('DejaVu Sans, 40-student roster', dejavu, `${roster} ${labels}`, hb);
measure('Noto Sans Hans, 40-student roster', hans, roster, hb);
measure('Noto Sans Hans, whole school (1,500 Han)', hans, school, hb);
