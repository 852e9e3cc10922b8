// Reading PDFs back in tests, in JavaScript alone: text and metadata through Mozilla's PDF.js (pdfjs-dist), the
// first page drawn to PNG by PDF.js on @napi-rs/canvas, and `qpdf --check` run by qpdf itself compiled to
// WebAssembly (@neslinesli93/qpdf-wasm). No poppler, no qpdf binary, nothing from the network.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { expect } from 'vitest';

const require = createRequire(import.meta.url);
const pdfjsDir = dirname(require.resolve('pdfjs-dist/package.json'));

let dir: string | undefined;
let n = 0;
function tempDir(): string {
  dir ??= mkdtempSync(join(tmpdir(), 'rostercal-pdf-'));
  return dir;
}

export function saveTemp(pdf: Uint8Array, name = `roster-${++n}.pdf`): string {
  const file = join(tempDir(), name);
  writeFileSync(file, pdf);
  return file;
}

const bytes = (pdf: Uint8Array | string): Uint8Array =>
  // PDF.js takes ownership of (detaches) the buffer it is given: always hand it a copy.
  typeof pdf === 'string' ? new Uint8Array(readFileSync(pdf)) : new Uint8Array(pdf);

/**
 * Asserts that a served or printed body is a PDF: it starts with the header "%PDF-". Takes what the tests hold: a
 * fetch's ArrayBuffer, a Buffer (Playwright, a child's stdout), text, or nothing (a download that did not come).
 */
export function expectPdf(body: ArrayBuffer | Uint8Array | string | null | undefined): void {
  const head =
    body === null || body === undefined
      ? body
      : typeof body === 'string'
        ? body.slice(0, 5)
        : Buffer.from(body instanceof ArrayBuffer ? new Uint8Array(body) : body)
            .subarray(0, 5)
            .toString('latin1');
  expect(head, 'a PDF starts with %PDF-').toBe('%PDF-');
}

type PdfJs = typeof import('pdfjs-dist/legacy/build/pdf.mjs');
let pdfjsModule: Promise<PdfJs> | undefined;
const pdfjs = () => {
  pdfjsModule ??= import('pdfjs-dist/legacy/build/pdf.mjs');
  return pdfjsModule;
};

/**
 * Opens a PDF with PDF.js, failing on what PDF.js would otherwise repair or skip quietly (a broken xref, a font
 * it cannot read): every warning it prints while loading is collected, and any makes this throw.
 */
async function open(pdf: Uint8Array | string, opts: { warnings?: boolean } = {}) {
  const lib = await pdfjs();
  const task = lib.getDocument({
    data: bytes(pdf),
    stopAtErrors: true,
    useSystemFonts: false,
    disableFontFace: true,
    standardFontDataUrl: `${join(pdfjsDir, 'standard_fonts')}/`,
    cMapUrl: `${join(pdfjsDir, 'cmaps')}/`,
    cMapPacked: true,
    verbosity: opts.warnings ? lib.VerbosityLevel.WARNINGS : lib.VerbosityLevel.ERRORS,
  });
  const doc = await task.promise;
  return Object.assign(doc, { close: () => task.destroy() });
}

interface Item {
  str: string;
  x: number;
  y: number;
  width: number;
  size: number;
  rtl: boolean;
}

type Line = Item[];

/** A piece of text placed as one: a cell's line, a heading. */
interface Run {
  text: string;
  x: number;
  y: number;
  size: number;
}

/** The page's text items grouped into lines (top to bottom), each line's items left to right. */
async function pageLines(doc: Awaited<ReturnType<typeof open>>, pageNo: number): Promise<Line[]> {
  const page = await doc.getPage(pageNo);
  const content = await page.getTextContent();
  const items: Item[] = [];
  for (const it of content.items) {
    // PDF.js adds whitespace items for the gaps it sees; the positions below say the same.
    if (!('str' in it) || it.str.trim() === '') continue;
    const [a, b, , , e, f] = it.transform as number[];
    items.push({
      str: it.str,
      x: e!,
      y: f!,
      width: it.width,
      size: Math.hypot(a!, b!) || it.height || 10,
      rtl: it.dir === 'rtl',
    });
  }
  // Same baseline (within a third of the text size) = same line.
  items.sort((p, q) => q.y - p.y || p.x - q.x);
  const lines: Line[] = [];
  for (const it of items) {
    const line = lines.at(-1);
    if (line && Math.abs(line[0]!.y - it.y) <= Math.min(line[0]!.size, it.size) / 3) line.push(it);
    else lines.push([it]);
  }
  for (const line of lines) line.sort((p, q) => p.x - q.x);
  page.cleanup();
  return lines;
}

/** A line cut into runs where its pieces are more than half a space apart; each run in reading order. */
function lineRuns(line: Line): Run[] {
  const runs: Item[][] = [];
  let end = Number.NEGATIVE_INFINITY;
  for (const it of line) {
    const run = runs.at(-1);
    if (run && it.x - end <= it.size * 0.5) run.push(it);
    else runs.push([it]);
    end = it.x + it.width;
  }
  return runs.map((run) => {
    // Right-to-left pieces are laid out right to left: read a stretch of them from its right end.
    const ordered: Item[] = [];
    for (let i = 0; i < run.length; ) {
      let j = i;
      if (run[i]!.rtl) while (j + 1 < run.length && run[j + 1]!.rtl) j++;
      const stretch = run.slice(i, j + 1);
      ordered.push(...(run[i]!.rtl ? stretch.reverse() : stretch));
      i = j + 1;
    }
    let text = '';
    let prev: Item | undefined;
    for (const it of ordered) {
      const gap = prev && !prev.rtl && !it.rtl ? it.x - (prev.x + prev.width) : prev ? it.size : 0;
      if (prev && gap > it.size * 0.15 && !text.endsWith(' ') && !it.str.startsWith(' ')) text += ' ';
      text += it.str;
      prev = it;
    }
    return { text: text.trim(), x: run[0]!.x, y: run[0]!.y, size: run[0]!.size };
  });
}

/**
 * Text of the PDF (or of one page). By default each block of text (a table cell, a heading, a paragraph) comes out
 * whole, its lines one under the other, as pdftotext prints table columns: the lines of a wrapped cell stay
 * together. `layout: true` keeps each visual line of the page together instead, its pieces separated by two
 * spaces, so that what sits on one row of a table is on one line of text. Pages are separated by a form feed.
 */
export async function pdfText(
  pdf: Uint8Array | string,
  opts: { page?: number; layout?: boolean } = {},
): Promise<string> {
  const doc = await open(pdf);
  try {
    const pages = opts.page ? [opts.page] : Array.from({ length: doc.numPages }, (_, i) => i + 1);
    const out: string[] = [];
    for (const p of pages) {
      const lines = (await pageLines(doc, p)).map(lineRuns);
      if (opts.layout) {
        out.push(lines.map((runs) => `${runs.map((r) => r.text).join('  ')}\n`).join(''));
        continue;
      }
      // A run continues the block above it when it starts at the same left edge, one line-height lower
      // (closer than the gap between table rows).
      const blocks: Run[][] = [];
      for (const runs of lines) {
        for (const run of runs) {
          const block = blocks.find((b) => {
            const last = b.at(-1)!;
            const drop = last.y - run.y;
            return Math.abs(last.x - run.x) < 1 && drop > 0 && drop <= Math.max(last.size, run.size) * 1.4;
          });
          if (block) block.push(run);
          else blocks.push([run]);
        }
      }
      out.push(blocks.map((b) => `${b.map((r) => r.text).join('\n')}\n`).join(''));
    }
    return out.join('\f');
  } finally {
    await doc.close();
  }
}

/** Every text item PDF.js extracts, with its page and size in points (from the text matrix): for size floors. */
export async function pdfTextItems(
  pdf: Uint8Array | string,
): Promise<{ page: number; str: string; size: number; x: number; y: number }[]> {
  const doc = await open(pdf);
  try {
    const out: { page: number; str: string; size: number; x: number; y: number }[] = [];
    for (let p = 1; p <= doc.numPages; p++) {
      for (const line of await pageLines(doc, p))
        for (const it of line) out.push({ page: p, str: it.str, size: it.size, x: it.x, y: it.y });
    }
    return out;
  } finally {
    await doc.close();
  }
}

interface StructNode {
  role?: string;
  alt?: string;
  lang?: string;
  type?: string;
  id?: string;
  children?: StructNode[];
}

/** Marked-content ids under each structure element that carries ActualText (or Alt), mapped to that text. */
function replacements(
  node: StructNode | null,
  out = new Map<string, string>(),
  alt?: string,
): Map<string, string> {
  if (!node) return out;
  const text = node.alt ?? alt;
  if (node.type === 'content' && node.id && text !== undefined) out.set(node.id, text);
  for (const child of node.children ?? []) replacements(child, out, text);
  return out;
}

/**
 * What search, copy and a screen reader get from the PDF, as PDF.js gives it to its accessibility layer: a
 * marked-content sequence whose structure element carries ActualText reads as that text once; other text reads as
 * its glyphs' Unicode (ToUnicode). One string per structure element or text item, in content order, for every page;
 * with the document's language (the catalog's /Lang) and whether it says it is tagged (/MarkInfo /Marked).
 */
export async function pdfSpokenText(
  pdf: Uint8Array | string,
): Promise<{ lang: string | null; tagged: boolean; runs: string[] }> {
  const doc = await open(pdf);
  try {
    const runs: string[] = [];
    for (let p = 1; p <= doc.numPages; p++) {
      const page = await doc.getPage(p);
      const actual = replacements((await page.getStructTree()) as StructNode | null);
      const content = await page.getTextContent({ includeMarkedContent: true });
      const said = new Set<string>();
      // Depth of marked content inside a replaced sequence: its glyphs are not read.
      let skipping = 0;
      for (const it of content.items) {
        if ('str' in it) {
          if (skipping === 0 && it.str.trim() !== '') runs.push(it.str);
          continue;
        }
        if (it.type === 'endMarkedContent') {
          if (skipping > 0) skipping--;
          continue;
        }
        if (skipping > 0) {
          skipping++;
          continue;
        }
        const text = it.id ? actual.get(it.id) : undefined;
        if (text === undefined) continue;
        skipping = 1;
        if (!said.has(it.id!)) runs.push(text);
        said.add(it.id!);
      }
      page.cleanup();
    }
    const { info } = (await doc.getMetadata()) as { info: Record<string, unknown> };
    // PDF.js gives /MarkInfo as a Map of its flags.
    const marked = (await doc.getMarkInfo()) as Map<string, boolean> | null;
    return {
      lang: typeof info.Language === 'string' ? info.Language : null,
      tagged: marked?.get('Marked') === true,
      runs,
    };
  } finally {
    await doc.close();
  }
}

/** The document's information dictionary and page count (what pdfinfo prints: Title, Author, Pages…). */
export async function pdfInfo(pdf: Uint8Array | string): Promise<Record<string, string>> {
  const doc = await open(pdf);
  try {
    const { info } = (await doc.getMetadata()) as { info: Record<string, unknown> };
    const out: Record<string, string> = { Pages: String(doc.numPages) };
    for (const [k, v] of Object.entries(info)) if (typeof v === 'string') out[k] = v;
    return out;
  } finally {
    await doc.close();
  }
}

type QpdfFactory = (opts: Record<string, unknown>) => Promise<{
  callMain(args: string[]): number;
  FS: { writeFile(path: string, data: Uint8Array): void };
}>;

/**
 * `qpdf --check`, by qpdf itself (WebAssembly): the cross-reference table, every object, every stream's encoding
 * and the page content streams. Returns qpdf's report; throws with it when qpdf finds a problem.
 */
export async function qpdfCheck(pdf: Uint8Array | string): Promise<string> {
  const { default: createQpdf } = (await import('@neslinesli93/qpdf-wasm')) as unknown as {
    default: QpdfFactory;
  };
  const out: string[] = [];
  // The module binds console.log/console.error as its stdout/stderr when it is created: catch them there.
  const { log, error } = console;
  const sink = (...args: unknown[]) => out.push(args.join(' '));
  console.log = sink;
  console.error = sink;
  let qpdf: Awaited<ReturnType<QpdfFactory>>;
  try {
    qpdf = await createQpdf({
      locateFile: (f: string) => require.resolve(`@neslinesli93/qpdf-wasm/dist/${f}`),
    });
  } finally {
    console.log = log;
    console.error = error;
  }
  qpdf.FS.writeFile('/in.pdf', bytes(pdf));
  let code: number;
  try {
    code = qpdf.callMain(['--check', '/in.pdf']);
  } catch (err) {
    code = typeof (err as { status?: number }).status === 'number' ? (err as { status: number }).status : 2;
    out.push(String(err));
  }
  const report = out.join('\n');
  // 0: no problems; 3: warnings (qpdf repaired something); 2: errors.
  if (code !== 0) throw new Error(`qpdf --check failed (exit ${code}):\n${report}`);
  if (!/No syntax or stream encoding errors found/.test(report))
    throw new Error(`qpdf --check did not report a clean file:\n${report}`);
  return report;
}

/**
 * The first page drawn to PNG (60 dpi) for people to look at, under the temp directory; throws when PDF.js reports
 * a problem drawing it (a font program it cannot read, a broken content stream).
 */
export async function pagePng(pdf: Uint8Array | string, name: string): Promise<string> {
  const { createCanvas } = await import('@napi-rs/canvas');
  const warnings: string[] = [];
  const { log } = console;
  // PDF.js reports loading and drawing problems through console.log (warnings only while this document is open).
  console.log = (...args: unknown[]) => warnings.push(args.join(' '));
  const doc = await open(pdf, { warnings: true }).catch((err: unknown) => {
    console.log = log;
    throw err;
  });
  try {
    const page = await doc.getPage(1);
    const viewport = page.getViewport({ scale: 60 / 72 });
    const canvas = createCanvas(Math.ceil(viewport.width), Math.ceil(viewport.height));
    const ctx = canvas.getContext('2d');
    ctx.fillStyle = '#fff';
    ctx.fillRect(0, 0, canvas.width, canvas.height);
    await page.render({
      canvas: canvas as never,
      canvasContext: ctx as never,
      viewport,
    }).promise;
    if (warnings.length) throw new Error(`PDF.js could not draw page 1 of ${name}:\n${warnings.join('\n')}`);
    const outDir = join(tempDir(), 'png');
    mkdirSync(outDir, { recursive: true });
    const file = join(outDir, `${name}.png`);
    writeFileSync(file, canvas.toBuffer('image/png'));
    return file;
  } finally {
    console.log = log;
    await doc.close();
  }
}

// Extracted text differs from the string drawn in ways that do not make a name print wrong: bidi marks around
// right-to-left runs, Arabic in presentation forms or visual order, Indic vowel signs in visual order, and spaces
// PDF readers put between combining marks. Comparison drops whitespace and controls, folds compatibility forms,
// and accepts the name's letters in logical order, in reverse, or (for shaped scripts) reordered in place.
const strip = (s: string) => s.normalize('NFKC').replace(/[\s\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, '');

function sorted(s: string): string {
  return Array.from(s).sort().join('');
}

export function containsText(text: string, wanted: string): boolean {
  const hay = strip(text);
  const parts = wanted.split(/\s+/).map(strip).filter(Boolean);
  return parts.every((p) => {
    if (hay.includes(p) || hay.includes(Array.from(p).reverse().join(''))) return true;
    const chars = Array.from(hay);
    const len = Array.from(p).length;
    const target = sorted(p);
    for (let i = 0; i + len <= chars.length; i++) {
      if (sorted(chars.slice(i, i + len).join('')) === target) return true;
    }
    return false;
  });
}

/** A PDF literal or hexadecimal string as its text: UTF-16BE after a byte-order mark, otherwise byte per char. */
function pdfStringText(raw: string): string {
  let bytes: number[] = [];
  if (raw.startsWith('<')) {
    const hex = raw.slice(1, -1).replace(/\s+/g, '');
    for (let i = 0; i < hex.length; i += 2)
      bytes.push(Number.parseInt(hex.slice(i, i + 2).padEnd(2, '0'), 16));
  } else {
    const body = raw.slice(1, -1);
    const escapes: Record<string, number> = { n: 10, r: 13, t: 9, b: 8, f: 12 };
    for (let i = 0; i < body.length; i++) {
      const c = body[i]!;
      if (c !== '\\') {
        bytes.push(c.charCodeAt(0));
        continue;
      }
      const next = body[++i]!;
      const octal = /^[0-7]{1,3}/.exec(body.slice(i))?.[0];
      if (octal) {
        bytes.push(Number.parseInt(octal, 8) & 0xff);
        i += octal.length - 1;
      } else if (next === '\r' || next === '\n') {
        if (next === '\r' && body[i + 1] === '\n') i++;
      } else bytes.push(escapes[next] ?? next.charCodeAt(0));
    }
  }
  if (bytes[0] === 0xfe && bytes[1] === 0xff) {
    bytes = bytes.slice(2);
    return Buffer.from(bytes).swap16().toString('utf16le');
  }
  return Buffer.from(bytes).toString('latin1');
}

/** The string that starts at `at` in a content stream (literal, with nested parentheses, or hexadecimal). */
function pdfStringAt(content: string, at: number): string {
  if (content[at] === '<') return content.slice(at, content.indexOf('>', at) + 1);
  let depth = 0;
  for (let i = at; i < content.length; i++) {
    const c = content[i];
    if (c === '\\') i++;
    else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return content.slice(at, i + 1);
  }
  throw new Error('unterminated string in a content stream');
}

/**
 * What a viewer that reads the page content stream finds as marked content's ActualText (poppler's pdftotext,
 * PDFium in Chrome: `/Span <</ActualText (…)>> BDC … EMC`, whose glyphs they replace with it), read from every
 * (Flate) stream of the file in order. In JavaScript, so the suite needs neither poppler nor PDFium.
 */
export async function contentStreamActualTexts(pdf: Uint8Array): Promise<string[]> {
  const { inflateSync, constants } = await import('node:zlib');
  const file = Buffer.from(pdf);
  const text = file.toString('latin1');
  const out: string[] = [];
  const streams = /<<((?:(?!>>\s*stream)[\s\S])*)>>\s*stream\r?\n/g;
  for (let m = streams.exec(text); m; m = streams.exec(text)) {
    const start = m.index + m[0].length;
    const end = text.indexOf('endstream', start);
    if (!/\/FlateDecode/.test(m[1]!) || end < 0) continue;
    let content: string;
    try {
      content = inflateSync(file.subarray(start, end), { finishFlush: constants.Z_SYNC_FLUSH }).toString(
        'latin1',
      );
    } catch {
      continue;
    }
    const marked = /\/ActualText\s*/g;
    for (let a = marked.exec(content); a; a = marked.exec(content)) {
      // Only marked-content properties: the dictionary that the BDC operator after it closes.
      const raw = pdfStringAt(content, a.index + a[0].length);
      const after = content.slice(
        a.index + a[0].length + raw.length,
        a.index + a[0].length + raw.length + 200,
      );
      if (/^[^<>]*>>\s*BDC/.test(after)) out.push(pdfStringText(raw));
    }
  }
  return out;
}
