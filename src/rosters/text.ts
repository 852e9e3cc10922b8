// Multi-script text for pdfkit: split a string into runs by font face and bidi level, measure, wrap, shrink to fit,
// and draw each line in visual order, telling the PDF's text layer the line as written.
//
// pdfkit itself has no font fallback and no bidi. fontkit (which pdfkit uses to lay out embedded fonts) does shape
// Arabic (contextual forms through the font's GSUB tables) and reverses the glyphs of a right-to-left run, but
// pdfkit lays out a string word by word in logical order, so a two-word Arabic name would come out with its words
// swapped. Here every word is its own run and the Unicode bidi algorithm (bidi-js) orders the runs of each line.
import bidiModule, { type Bidi } from 'bidi-js';
import { LRUCache } from 'lru-cache';
import type { Face, FontSet, Lang, Weight } from './fonts.ts';

// bidi-js is CommonJS whose module.exports is the factory; its typings describe an ES default export.
const bidi = (bidiModule as unknown as () => Bidi)();

/** One run of text drawn with one face at one bidi level. `text` is in logical order. */
export interface Piece {
  text: string;
  face: Face;
  /** Bidi embedding level: odd is right-to-left. */
  level: number;
  space: boolean;
  /** Advance width at 1 pt. */
  width: number;
}

/** A paragraph's words (each a list of pieces with no space in between) and the spaces after them. */
interface Word {
  pieces: Piece[];
  width: number;
  /** The whitespace piece that follows the word, if any. */
  after: Piece | null;
}

/**
 * A line of pieces in visual order (as drawn), with its text as written (logical order): the glyphs of shaped and
 * right-to-left scripts are drawn in visual order, so the line's text goes into the PDF as ActualText.
 */
export type Line = Piece[] & { readonly text: string };

export interface FittedText {
  lines: Line[];
  /** Font size chosen. */
  size: number;
}

const RTL_CHARS = /[\u0590-\u08FF\uFB1D-\uFDFF\uFE70-\uFEFF\u{10800}-\u{10FFF}\u{1E800}-\u{1EFFF}]/u;
const STRONG_RTL_SCRIPT = /[\u0590-\u08FF\uFB1D-\uFDFF\uFE70-\uFEFF]/;
const JOINS_PREVIOUS = /^(?:\p{M}|\u200C|\u200D|[\uFE00-\uFE0F])$/u;
const SPACE = /\s/;
const KANA = /[\u3040-\u30FF\u31F0-\u31FF]/;

// Widths of runs at 1 pt, per face and text: names repeat across rosters, and fontkit layout is the costly part.
const widthCache = new LRUCache<string, number>({ max: 100_000 });

function measure(face: Face, text: string): number {
  const key = `${face.key}\u0000${text}`;
  let w = widthCache.get(key);
  if (w === undefined) {
    w = face.measure(text);
    widthCache.set(key, w);
  }
  return w;
}

/** Removes characters that would print as boxes or break the layout (controls), and composes accents (NFC). */
export function cleanText(text: string): string {
  return text
    .normalize('NFC')
    .replace(/\t/g, ' ')
    .replace(/\p{Cc}/gu, (c) => (c === '\n' ? c : ''));
}

function levelsOf(paragraph: string): Uint8Array | null {
  if (!RTL_CHARS.test(paragraph)) return null;
  // The sheets are left-to-right documents: a list that starts with an Arabic name ("نور العلي, Ruby Wilson")
  // still reads from the left, with each right-to-left run reversed in place.
  return bidi.getEmbeddingLevels(paragraph, 'ltr').levels;
}

/** Splits one paragraph (no newlines) into words of pieces. */
function toWords(paragraph: string, fonts: FontSet, weight: Weight): Word[] {
  const levels = levelsOf(paragraph);
  const lang: Lang = KANA.test(paragraph) ? 'ja' : null;
  const words: Word[] = [];
  let current: Word = { pieces: [], width: 0, after: null };
  let run = '';
  let runFace: Face | null = null;
  let runLevel = 0;
  let runSpace = false;

  const flush = () => {
    if (!run || !runFace) return;
    const piece: Piece = {
      text: run,
      face: runFace,
      level: runLevel,
      space: runSpace,
      width: measure(runFace, run),
    };
    if (runSpace) {
      if (current.pieces.length > 0) {
        current.after = piece;
        words.push(current);
        current = { pieces: [], width: 0, after: null };
      }
      // Leading whitespace of a paragraph is dropped: cells are aligned by the renderer.
    } else {
      current.pieces.push(piece);
      current.width += piece.width;
    }
    run = '';
  };

  let i = 0;
  for (const ch of paragraph) {
    const cp = ch.codePointAt(0)!;
    const level = levels ? levels[i]! : 0;
    const space = SPACE.test(ch);
    const joins = run !== '' && !space && !runSpace && JOINS_PREVIOUS.test(ch);
    const face: Face =
      joins && runFace ? runFace : space ? fonts.primary(weight) : fonts.faceFor(cp, weight, lang);
    if (run !== '' && (space !== runSpace || (!joins && (face !== runFace || level !== runLevel)))) {
      flush();
    }
    if (run === '') {
      runFace = face;
      runLevel = level;
      runSpace = space;
    }
    run += ch;
    i += ch.length;
  }
  flush();
  if (current.pieces.length > 0) words.push(current);
  return words;
}

/** UAX #9 rule L2: reverse every maximal sequence at level ≥ k, for k from the highest level down to the lowest odd. */
function visualOrder(line: Piece[]): Piece[] {
  let max = 0;
  let minOdd = Number.POSITIVE_INFINITY;
  for (const p of line) {
    if (p.level > max) max = p.level;
    if (p.level % 2 === 1 && p.level < minOdd) minOdd = p.level;
  }
  if (max === 0) return line;
  const out = line.slice();
  for (let k = max; k >= minOdd; k--) {
    let i = 0;
    while (i < out.length) {
      if (out[i]!.level >= k) {
        let j = i;
        while (j < out.length && out[j]!.level >= k) j++;
        const reversed = out.slice(i, j).reverse();
        out.splice(i, j - i, ...reversed);
        i = j;
      } else {
        i++;
      }
    }
  }
  return out;
}

/** A logical line (pieces in reading order, spaces included) laid out for drawing, with its text as written. */
function toLine(logical: Piece[]): Line {
  const text = logical.map((p) => p.text).join('');
  return Object.assign(visualOrder(logical), { text });
}

/**
 * Text of a piece as pdfkit must receive it. fontkit reverses runs of a right-to-left script itself; a right-to-left
 * run without such letters (neutral punctuation between Arabic words) is reversed and mirrored here.
 */
export function drawableText(piece: Piece): string {
  if (piece.level % 2 === 0 || STRONG_RTL_SCRIPT.test(piece.text)) return piece.text;
  return Array.from(piece.text)
    .reverse()
    .map((c) => bidi.getMirroredCharacter(c) ?? c)
    .join('');
}

/** Breaks a word that is wider than the line into chunks (at code point boundaries, keeping marks attached). */
function breakWord(word: Word, maxWidth: number): Word[] {
  const out: Word[] = [];
  let chunk: Word = { pieces: [], width: 0, after: null };
  for (const piece of word.pieces) {
    let text = '';
    for (const ch of piece.text) {
      const next = text + ch;
      const w = measure(piece.face, next);
      if (
        chunk.width + w > maxWidth &&
        (text !== '' || chunk.pieces.length > 0) &&
        !JOINS_PREVIOUS.test(ch)
      ) {
        if (text) {
          const width = measure(piece.face, text);
          chunk.pieces.push({ ...piece, text, width });
          chunk.width += width;
        }
        out.push(chunk);
        chunk = { pieces: [], width: 0, after: null };
        text = ch;
      } else {
        text = next;
      }
    }
    if (text) {
      const width = measure(piece.face, text);
      chunk.pieces.push({ ...piece, text, width });
      chunk.width += width;
    }
  }
  chunk.after = word.after;
  if (chunk.pieces.length > 0) out.push(chunk);
  return out;
}

function wrapWords(
  words: Word[],
  maxWidth: number,
  breakLongWords: boolean,
): { lines: Piece[][]; overflow: boolean } {
  const lines: Piece[][] = [];
  let line: Piece[] = [];
  let lineWidth = 0;
  let overflow = false;
  let pendingSpace: Piece | null = null;
  const queue = words.slice();
  while (queue.length > 0) {
    const word = queue.shift()!;
    if (word.width > maxWidth) {
      if (breakLongWords && word.pieces.length > 0) {
        const parts = breakWord(word, maxWidth);
        if (parts.length > 1) {
          queue.unshift(...parts);
          continue;
        }
      }
      overflow = true;
    }
    const spaceWidth = pendingSpace ? pendingSpace.width : 0;
    if (line.length > 0 && lineWidth + spaceWidth + word.width > maxWidth) {
      lines.push(line);
      line = [];
      lineWidth = 0;
    } else if (line.length > 0 && pendingSpace) {
      line.push(pendingSpace);
      lineWidth += spaceWidth;
    }
    line.push(...word.pieces);
    lineWidth += word.width;
    pendingSpace = word.after;
  }
  if (line.length > 0) lines.push(line);
  return { lines, overflow };
}

export interface FitOptions {
  fonts: FontSet;
  weight: Weight;
  size: number;
  /** Smallest size the text may shrink to before it wraps onto more lines than maxLines. */
  minSize: number;
  maxLines: number;
}

/** Paragraphs (split at newlines) as words; computed once per text and weight, then wrapped at any size. */
// Analysed text per font set, weight and string: names, labels and headings recur on every roster of a school.
// Words and pieces are never mutated after analysis, so sharing them is safe.
const analysed = new LRUCache<string, Word[][]>({ max: 20_000 });

function paragraphsOf(text: string, fonts: FontSet, weight: Weight): Word[][] {
  const key = `${fonts.name}|${weight}|${text}`;
  let paras = analysed.get(key);
  if (!paras) {
    paras = cleanText(text)
      .split(/\r?\n/)
      .map((p) => toWords(p, fonts, weight));
    analysed.set(key, paras);
  }
  return paras;
}

function wrapAll(paras: Word[][], maxWidth: number, breakLongWords: boolean) {
  const lines: Piece[][] = [];
  let overflow = false;
  for (const words of paras) {
    const r = wrapWords(words, maxWidth, breakLongWords);
    overflow ||= r.overflow;
    lines.push(...(r.lines.length > 0 ? r.lines : [[]]));
  }
  return { lines, overflow };
}

/**
 * Fits text into a width: the largest size from `size` down to `minSize` at which it needs at most `maxLines` lines
 * without any word overflowing; failing that, `minSize` with long words broken and as many lines as it takes (the
 * caller grows the row). The text never overflows the width.
 */
export function fitText(text: string, width: number, opts: FitOptions): FittedText {
  const paras = paragraphsOf(text, opts.fonts, opts.weight);
  for (let size = opts.size; size >= opts.minSize - 1e-9; size -= 0.5) {
    const r = wrapAll(paras, width / size, false);
    if (!r.overflow && r.lines.length <= opts.maxLines) return { lines: r.lines.map(toLine), size };
  }
  const size = opts.minSize;
  const r = wrapAll(paras, width / size, true);
  return { lines: r.lines.map(toLine), size };
}

/** Width of one laid-out line at a size. */
export function lineWidth(line: Piece[], size: number): number {
  let w = 0;
  for (const p of line) w += p.width;
  return w * size;
}

/** Text in one line, at a size, without wrapping: for labels whose width the caller has reserved. */
export function singleLine(text: string, fonts: FontSet, weight: Weight): Line {
  const words = paragraphsOf(text.replace(/\r?\n/g, ' '), fonts, weight)[0] ?? [];
  const line: Piece[] = [];
  for (const w of words) {
    line.push(...w.pieces);
    if (w.after) line.push(w.after);
  }
  while (line.length > 0 && line[line.length - 1]!.space) line.pop();
  return toLine(line);
}

export const EMPTY_LINE: Line = Object.assign([], { text: '' });

// Text whose glyphs map one to one, in order, onto its characters needs no ActualText: Latin-1 in the primary face.
// Anything else (shaped, reordered, right-to-left, or composed from several glyphs) carries the line as written.
const NEEDS_ACTUAL = /[\u0100-\u{10ffff}]/u;

/**
 * Draws a line of pieces in visual order from x, with its baseline at y. With `into` (a tagged document's structure
 * element), the line is content of it, in a Span whose ActualText is the line as written where its glyphs do not
 * say it.
 */
export function drawLine(
  doc: PDFKit.PDFDocument,
  fonts: FontSet,
  line: Line,
  x: number,
  baselineY: number,
  size: number,
  into: PDFKit.PDFStructureElement | null = null,
): void {
  const draw = () => {
    let cx = x;
    for (const piece of line) {
      if (!piece.space) {
        fonts.use(doc, piece.face);
        doc.font(piece.face.key).fontSize(size).text(drawableText(piece), cx, baselineY, {
          lineBreak: false,
          baseline: 'alphabetic',
        });
      }
      cx += piece.width * size;
    }
  };
  if (!into || line.text.trim() === '') {
    draw();
    return;
  }
  // `into` is attached, so pdfkit runs `draw` now, inside a marked-content sequence that belongs to it. Only a
  // line whose glyphs do not say its text gets a Span element of its own (an object each: ~3 KB a page otherwise).
  if (!NEEDS_ACTUAL.test(line.text)) {
    into.add(draw);
    return;
  }
  // A right-to-left line keeps its text on the Span element only: poppler lays a marked sequence's ActualText out
  // left to right across its box and then reorders right-to-left runs as if drawn in visual order, so "محمد العلي"
  // came out reversed; from the glyphs (drawn in visual order, each mapped to its letter) it reads the name right.
  if (RTL_CHARS.test(line.text)) {
    into.add(doc.struct('Span', { actual: line.text }, [draw]));
    return;
  }
  // Otherwise the line as written goes twice: on the Span element (Acrobat, screen readers, PDF.js read the structure
  // tree) and on its marked-content sequence in the page's content stream, `/Span <</MCID n /ActualText (…)>> BDC`,
  // which poppler (pdftotext) and PDFium (Chrome) read instead of the glyphs (Devanagari's short i drawn before its
  // consonant, Thai marks). pdfkit's struct() marks a closure's content with the MCID alone: opened here with both.
  const span = doc.struct('Span', { actual: line.text });
  into.add(span);
  const content = doc.markStructureContent('Span', { actual: line.text });
  draw();
  doc.endMarkedContent();
  span.add(content);
  span.end();
}
