// Reading PDFs back for assertions, with the Debian tools a reader would use: pdftotext, qpdf, pdfinfo.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const dir = mkdtempSync(join(tmpdir(), 'rostercal-pdf-'));
let n = 0;

export function saveTemp(pdf: Buffer, name = `roster-${++n}.pdf`): string {
  const file = join(dir, name);
  writeFileSync(file, pdf);
  return file;
}

/** Text of the PDF (or of one page) as pdftotext extracts it. */
export function pdfText(pdf: Buffer | string, opts: { page?: number; layout?: boolean } = {}): string {
  const file = typeof pdf === 'string' ? pdf : saveTemp(pdf);
  const args = [
    ...(opts.layout ? ['-layout'] : []),
    ...(opts.page ? ['-f', String(opts.page), '-l', String(opts.page)] : []),
  ];
  return execFileSync('pdftotext', [...args, '-enc', 'UTF-8', file, '-'], { encoding: 'utf8' });
}

/** `qpdf --check`: throws (with qpdf's words) when the file is damaged. */
export function qpdfCheck(pdf: Buffer | string): string {
  const file = typeof pdf === 'string' ? pdf : saveTemp(pdf);
  return execFileSync('qpdf', ['--check', file], { encoding: 'utf8' });
}

export function pdfInfo(pdf: Buffer | string): Record<string, string> {
  const file = typeof pdf === 'string' ? pdf : saveTemp(pdf);
  const out = execFileSync('pdfinfo', ['-enc', 'UTF-8', file], { encoding: 'utf8' });
  const info: Record<string, string> = {};
  for (const line of out.split('\n')) {
    const m = /^([^:]+):\s*(.*)$/.exec(line);
    if (m) info[m[1]!] = m[2]!;
  }
  return info;
}

/** First page as PNG at 60 dpi, for people to look at; throws when poppler reports a problem drawing it. */
export function pagePng(pdf: Buffer | string, name: string): string {
  const file = typeof pdf === 'string' ? pdf : saveTemp(pdf);
  const prefix = join(dir, name);
  const r = spawnSync('pdftoppm', ['-png', '-r', '60', '-f', '1', '-l', '1', '-singlefile', file, prefix], {
    encoding: 'utf8',
  });
  // poppler (FreeType) complains on stderr about a font program it cannot read: a broken subset shows here.
  if (r.status !== 0 || r.stderr.trim())
    throw new Error(`pdftoppm ${file}: ${r.stderr || `exit ${r.status}`}`);
  return `${prefix}.png`;
}

// Extracted text differs from the string drawn in ways that do not make a name print wrong: bidi marks around
// right-to-left runs, Arabic in presentation forms or visual order, Indic vowel signs in visual order, and spaces
// poppler puts between combining marks. Comparison drops whitespace and controls, folds compatibility forms,
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

export function readPng(file: string): Buffer {
  return readFileSync(file);
}
