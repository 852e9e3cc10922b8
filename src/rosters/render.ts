// Draws a Sheet with pdfkit: heading and facts, a table that flows over pages with its header repeated, the blocks
// after the table, and on every page the school, the generation time and "Page x of y".
// The table is drawn here rather than with doc.table(): it must repeat its header, grow rows to fit wrapped text,
// mix fonts per text run, and not re-read fonts per cell.
import PDFDocument from 'pdfkit';
import { type FontSet, unicodeFonts, type Weight } from './fonts.ts';
import { type Cell, generatedLabel, type Sheet, type SheetColumn, type SheetRow } from './sheet.ts';
import type { RosterTemplate } from './template.ts';
import { drawLine, EMPTY_LINE, type FittedText, fitText, type Line, lineWidth, singleLine } from './text.ts';

export interface RenderOptions {
  /** Faces to draw with; the default embeds Unicode fonts. The benchmark's baseline passes pdfkit's Helvetica. */
  fonts?: FontSet;
}

type Doc = PDFKit.PDFDocument;

const LINE = 1.22;
const PAD_X = 3;
const PAD_Y = 2.5;
const GRID = '#9a9a9a';
const HEADER_FILL = '#e4e4e4';
const ZEBRA_FILL = '#f4f4f4';
const MARKED_FILL = '#fbe3bd';
const MUTED = '#555555';

interface Frame {
  doc: Doc;
  fonts: FontSet;
  template: RosterTemplate;
  sheet: Sheet;
  left: number;
  right: number;
  top: number;
  /** Lowest y content may reach; the footer lives below it. */
  bottom: number;
  widths: number[];
  y: number;
  /** Smallest size any text may take (the sheet's floor); with one, text wraps onto more lines rather than shrink. */
  floor: number;
  /** The structure element text goes into (the tagged PDF's Document), or null for artifacts (page footers). */
  tags: PDFKit.PDFStructureElement | null;
}

/** A size raised to the sheet's floor. */
const at = (f: Frame, size: number) => Math.max(size, f.floor);

function fitCell(
  f: Frame,
  text: string,
  width: number,
  size: number,
  weight: Weight,
  maxLines: number,
): FittedText {
  const s = at(f, size);
  return fitText(text, Math.max(width, 1), {
    fonts: f.fonts,
    weight,
    size: s,
    minSize: f.floor > 0 ? s : Math.max(5.5, s - 3),
    maxLines: f.floor > 0 ? Number.POSITIVE_INFINITY : maxLines,
  });
}

function textHeight(t: FittedText): number {
  return Math.max(1, t.lines.length) * t.size * LINE;
}

/** Draws fitted text in a box; `top` is the box's top; lines are aligned within `width`. */
function drawFitted(
  f: Frame,
  t: FittedText,
  x: number,
  top: number,
  width: number,
  align: 'left' | 'center' | 'right',
  color = '#000000',
): void {
  f.doc.fillColor(color);
  // The baseline sits at the primary face's ascent, so mixed faces on one line share it.
  const ascent = f.fonts.primary('regular').ascent;
  let y = top;
  for (const line of t.lines) {
    const w = lineWidth(line, t.size);
    const dx = align === 'left' ? 0 : align === 'center' ? (width - w) / 2 : width - w;
    drawLine(
      f.doc,
      f.fonts,
      line,
      x + Math.max(0, dx),
      y + t.size * ascent + (LINE - 1) * t.size * 0.5,
      t.size,
      f.tags,
    );
    y += t.size * LINE;
  }
}

function drawSingle(
  f: Frame,
  line: Line,
  x: number,
  baseline: number,
  size: number,
  color = '#000000',
): void {
  f.doc.fillColor(color);
  drawLine(f.doc, f.fonts, line, x, baseline, at(f, size), f.tags);
}

function columnWidths(columns: SheetColumn[], available: number): number[] {
  const fixed = columns.reduce((s, c) => s + (c.width ?? 0), 0);
  const flex = columns.reduce((s, c) => s + (c.width === null ? c.flex : 0), 0);
  const spare = Math.max(0, available - fixed);
  return columns.map((c) => c.width ?? (flex > 0 ? (spare * c.flex) / flex : 0));
}

const BANNER_FILL = '#c62828';

/** A red band with the sheet's warning (a cancelled session), on every page above the rest. */
function drawBanner(f: Frame): void {
  if (!f.sheet.banner) return;
  const width = f.right - f.left;
  const text = fitCell(f, f.sheet.banner, width - 16, 15, 'bold', 1);
  const height = textHeight(text) + 10;
  f.doc.rect(f.left, f.y, width, height).fill(BANNER_FILL);
  drawFitted(f, text, f.left + 8, f.y + 5, width - 16, 'center', '#ffffff');
  f.y += height + 8;
}

function bannerHeight(f: Frame): number {
  if (!f.sheet.banner) return 0;
  return textHeight(fitCell(f, f.sheet.banner, f.right - f.left - 16, 15, 'bold', 1)) + 18;
}

/** First page: title, school, subtitle, and the facts in a grid. */
function drawHeading(f: Frame): void {
  const { doc, sheet } = f;
  const width = f.right - f.left;
  drawBanner(f);
  const schoolText = fitCell(f, sheet.school.name, width * 0.4, 9, 'regular', 2);
  const titleText = fitCell(f, sheet.title, width * 0.58, 17, 'bold', 2);
  drawFitted(f, titleText, f.left, f.y, width * 0.58, 'left');
  drawFitted(f, schoolText, f.right - width * 0.4, f.y + 3, width * 0.4, 'right', MUTED);
  f.y += Math.max(textHeight(titleText), textHeight(schoolText) + 3) + 2;
  const sub = fitCell(f, sheet.subtitle, width, 11, 'bold', 2);
  drawFitted(f, sub, f.left, f.y, width, 'left', '#222222');
  f.y += textHeight(sub) + 6;

  if (sheet.facts.length === 0) return;
  const cols = width > 600 ? 3 : 2;
  const gap = 12;
  const cellWidth = (width - gap * (cols - 1)) / cols;
  const labelWidth = 68;
  doc.lineWidth(0.5).strokeColor(GRID);
  doc
    .moveTo(f.left, f.y - 2)
    .lineTo(f.right, f.y - 2)
    .stroke();
  for (let i = 0; i < sheet.facts.length; i += cols) {
    const row = sheet.facts.slice(i, i + cols);
    const fitted = row.map((fact) => ({
      label: fitCell(f, fact.label, labelWidth - 4, 8, 'bold', 2),
      value: fitCell(f, fact.value, cellWidth - labelWidth, 9.5, 'regular', 3),
    }));
    const h = Math.max(...fitted.map((x) => Math.max(textHeight(x.label), textHeight(x.value)))) + 3;
    fitted.forEach((x, j) => {
      const cx = f.left + j * (cellWidth + gap);
      drawFitted(f, x.label, cx, f.y + 1, labelWidth - 4, 'left', MUTED);
      drawFitted(f, x.value, cx + labelWidth, f.y, cellWidth - labelWidth, 'left');
    });
    f.y += h;
  }
  doc
    .moveTo(f.left, f.y + 1)
    .lineTo(f.right, f.y + 1)
    .stroke();
  f.y += 10;
}

/** Later pages: one line saying whose sheet continues. */
function drawContinuation(f: Frame): void {
  const text = fitCell(
    f,
    `${f.sheet.title} · ${f.sheet.subtitle} (continued)`,
    f.right - f.left,
    9.5,
    'bold',
    2,
  );
  drawFitted(f, text, f.left, f.y, f.right - f.left, 'left', '#222222');
  f.y += textHeight(text) + 6;
}

function newPage(f: Frame, withTableHeader: boolean): void {
  f.doc.addPage();
  f.y = f.top;
  drawBanner(f);
  drawContinuation(f);
  if (withTableHeader) drawTableHeader(f);
}

function tableHeaderHeight(f: Frame): { fitted: FittedText[]; height: number } {
  const size = Math.max(6, f.template.fontSize - 1);
  const fitted = f.sheet.columns.map((c, i) =>
    fitCell(f, c.label, f.widths[i]! - 2 * PAD_X, size, 'bold', 2),
  );
  const height = Math.max(...fitted.map(textHeight)) + 2 * PAD_Y + 1;
  return { fitted, height };
}

function drawTableHeader(f: Frame): void {
  const { doc } = f;
  const { fitted, height } = tableHeaderHeight(f);
  doc.rect(f.left, f.y, f.right - f.left, height).fill(HEADER_FILL);
  let x = f.left;
  f.sheet.columns.forEach((c, i) => {
    const w = f.widths[i]!;
    const t = fitted[i]!;
    const top = f.y + (height - textHeight(t)) / 2;
    drawFitted(f, t, x + PAD_X, top, w - 2 * PAD_X, c.align);
    x += w;
  });
  strokeRowGrid(f, f.y, height, 0.8);
  f.y += height;
}

function strokeRowGrid(f: Frame, top: number, height: number, bottomWidth = 0.4): void {
  const { doc } = f;
  doc.strokeColor(GRID).lineWidth(0.4);
  let x = f.left;
  for (const w of f.widths) {
    doc.moveTo(x, top).lineTo(x, top + height);
    x += w;
  }
  doc.moveTo(f.right, top).lineTo(f.right, top + height);
  doc.stroke();
  doc
    .lineWidth(bottomWidth)
    .moveTo(f.left, top + height)
    .lineTo(f.right, top + height)
    .stroke();
}

function drawTick(f: Frame, cx: number, cy: number, checked: boolean): void {
  const s = Math.min(10, f.template.fontSize + 0.5);
  const { doc } = f;
  doc
    .lineWidth(0.8)
    .strokeColor('#000000')
    .rect(cx - s / 2, cy - s / 2, s, s)
    .stroke();
  if (checked) {
    const d = s / 2 - 1.8;
    doc
      .lineWidth(1.3)
      .moveTo(cx - d, cy - d)
      .lineTo(cx + d, cy + d)
      .moveTo(cx + d, cy - d)
      .lineTo(cx - d, cy + d)
      .stroke();
  }
}

function rowLayout(f: Frame, row: SheetRow): { fitted: (FittedText | null)[]; height: number } {
  const size = f.template.fontSize;
  const minRow = Math.max(f.template.rowHeight ?? 0, size * LINE + 2 * PAD_Y);
  const fitted = row.cells.map((cell, i): FittedText | null =>
    cell.kind === 'text' && cell.text
      ? fitCell(f, cell.text, f.widths[i]! - 2 * PAD_X, size, cell.bold ? 'bold' : 'regular', 2)
      : null,
  );
  const height = Math.max(minRow, ...fitted.map((t) => (t ? textHeight(t) + 2 * PAD_Y : 0)));
  return { fitted, height };
}

/** Height of the blocks after the table (with the gap before them). */
function afterHeight(f: Frame): number {
  const heights = { result: 92 + 12, notes: 16 + 4 * 20 + 12, signoff: 34 };
  return 12 + f.sheet.after.reduce((sum, block) => sum + heights[block], 0);
}

/**
 * Which rows to draw and where to break, so the table's end stays with the blocks after it: a page that would
 * carry only blank rows and the signature line is never started. The blank rows for late additions are cut to
 * what fits beside the last student; when not even the blocks after the table fit there, the last two students
 * move to the next page with them.
 */
function planRows(f: Frame, heights: number[]): { count: number; breakBefore: number | null } {
  const rows = f.sheet.rows;
  let students = rows.length;
  while (students > 0 && rows[students - 1]!.studentId === null) students--;
  const continuation = textHeight(
    fitCell(f, `${f.sheet.title} · ${f.sheet.subtitle} (continued)`, f.right - f.left, 9.5, 'bold', 2),
  );
  const pageTop = f.top + bannerHeight(f) + continuation + 6 + tableHeaderHeight(f).height;
  const simulate = (count: number, breakBefore: number | null) => {
    let y = f.y;
    let page = 0;
    let lastStudentPage = 0;
    for (let i = 0; i < count; i++) {
      if (y + heights[i]! > f.bottom || i === breakBefore) {
        page++;
        y = pageTop;
      }
      y += heights[i]!;
      if (i < students) lastStudentPage = page;
    }
    return { y, page, lastStudentPage };
  };
  const after = afterHeight(f);
  for (const breakBefore of students >= 3 ? [null, students - 2] : [null]) {
    for (let count = rows.length; count >= students; count--) {
      const r = simulate(count, breakBefore);
      if (r.page === r.lastStudentPage && r.y + after <= f.bottom) return { count, breakBefore };
    }
  }
  return { count: rows.length, breakBefore: null };
}

function drawRows(f: Frame): void {
  const { doc, sheet, template } = f;
  const layouts = sheet.rows.map((row) => rowLayout(f, row));
  const plan = planRows(
    f,
    layouts.map((l) => l.height),
  );
  sheet.rows.slice(0, plan.count).forEach((row, r) => {
    const { fitted, height } = layouts[r]!;
    if (f.y + height > f.bottom || r === plan.breakBefore) newPage(f, true);
    const top = f.y;
    if (row.marked) doc.rect(f.left, top, f.right - f.left, height).fill(MARKED_FILL);
    else if (template.zebra && r % 2 === 1) doc.rect(f.left, top, f.right - f.left, height).fill(ZEBRA_FILL);
    let x = f.left;
    row.cells.forEach((cell: Cell, i) => {
      const w = f.widths[i]!;
      const col = sheet.columns[i]!;
      const t = fitted[i];
      if (t) {
        // Text is vertically centred in rows taller than it (handwriting room), else starts at the padding.
        const th = textHeight(t);
        drawFitted(f, t, x + PAD_X, top + Math.max(PAD_Y, (height - th) / 2), w - 2 * PAD_X, col.align);
      } else if (cell.kind === 'tick') {
        drawTick(f, x + w / 2, top + height / 2, cell.checked);
      }
      x += w;
    });
    strokeRowGrid(f, top, height);
    f.y += height;
  });
}

function drawResult(f: Frame): void {
  const { doc, sheet } = f;
  const width = f.right - f.left;
  const height = 92;
  if (f.y + height > f.bottom) newPage(f, false);
  const top = f.y;
  doc.lineWidth(0.8).strokeColor('#000000').rect(f.left, top, width, height).stroke();
  const heading = singleLine('Result', f.fonts, 'bold');
  drawSingle(f, heading, f.left + 8, top + 16, 11);
  const sideWidth = (width - 150) / 2;
  const ours = fitCell(f, sheet.sides.ours, sideWidth - 16, 10, 'bold', 1);
  const theirs = fitCell(f, sheet.sides.theirs, sideWidth - 16, 10, 'bold', 1);
  const scoreTop = top + 30;
  drawFitted(f, ours, f.left + 8, scoreTop, sideWidth - 16, 'right');
  const boxX = f.left + sideWidth;
  doc
    .lineWidth(0.8)
    .rect(boxX, scoreTop - 4, 56, 24)
    .stroke();
  drawSingle(f, singleLine('–', f.fonts, 'bold'), boxX + 68, scoreTop + 12, 12);
  doc.rect(boxX + 94, scoreTop - 4, 56, 24).stroke();
  drawFitted(f, theirs, boxX + 158, scoreTop, sideWidth - 16, 'left');
  const outcomes = singleLine(
    'Win   /   Loss   /   Draw   /   Forfeit   /   No result   (circle one)',
    f.fonts,
    'regular',
  );
  drawSingle(f, outcomes, f.left + 8, top + 70, 9, MUTED);
  const best = singleLine('Scorers / best players:', f.fonts, 'regular');
  drawSingle(f, best, f.left + 8, top + 86, 9, MUTED);
  doc
    .lineWidth(0.4)
    .strokeColor(GRID)
    .moveTo(f.left + 8 + lineWidth(best, 9) + 6, top + 87)
    .lineTo(f.right - 8, top + 87)
    .stroke();
  f.y = top + height + 12;
}

function drawNotes(f: Frame): void {
  const lines = 4;
  const height = 16 + lines * 20;
  if (f.y + height > f.bottom) newPage(f, false);
  drawSingle(f, singleLine('Notes', f.fonts, 'bold'), f.left, f.y + 11, 11);
  let y = f.y + 16;
  f.doc.lineWidth(0.4).strokeColor(GRID);
  for (let i = 0; i < lines; i++) {
    y += 20;
    f.doc.moveTo(f.left, y).lineTo(f.right, y).stroke();
  }
  f.y = y + 12;
}

function drawSignoff(f: Frame): void {
  const height = 34;
  if (f.y + height > f.bottom) newPage(f, false);
  const width = f.right - f.left;
  const labels = ['Roll taken by', 'Signature', 'Time'];
  const spans = [0.45, 0.35, 0.2];
  let x = f.left;
  const baseline = f.y + 24;
  labels.forEach((label, i) => {
    const w = width * spans[i]!;
    const line = singleLine(label, f.fonts, 'regular');
    drawSingle(f, line, x, baseline, 9, MUTED);
    const lw = lineWidth(line, 9);
    f.doc
      .lineWidth(0.5)
      .strokeColor('#000000')
      .moveTo(x + lw + 4, baseline + 1)
      .lineTo(x + w - 10, baseline + 1)
      .stroke();
    x += w;
  });
  f.y += height;
}

/** Footer of every page: template footer text, school and generation time, and "Page x of y". */
function drawFooters(f: Frame): void {
  const { doc, sheet } = f;
  const range = doc.bufferedPageRange();
  const generated = `${sheet.school.name} · Generated ${generatedLabel(sheet.generatedAt, sheet.school.timeZone, sheet.locale)}`;
  const width = f.right - f.left;
  // Page furniture, not content: an artifact that screen readers skip and that stays out of the reading order.
  const furniture: Frame = { ...f, tags: null };
  for (let i = range.start; i < range.start + range.count; i++) {
    doc.switchToPage(i);
    doc.markContent('Artifact', { type: 'Pagination' });
    const page = singleLine(`Page ${i - range.start + 1} of ${range.count}`, f.fonts, 'regular');
    const pageW = lineWidth(page, at(f, 8));
    const baseline = f.bottom + 26;
    doc
      .lineWidth(0.4)
      .strokeColor(GRID)
      .moveTo(f.left, f.bottom + 6)
      .lineTo(f.right, f.bottom + 6)
      .stroke();
    if (sheet.footer) {
      const footer = fitCell(f, sheet.footer, width, 7.5, 'regular', 1);
      const line = footer.lines[0] ?? EMPTY_LINE;
      drawSingle(
        furniture,
        line,
        f.left + (width - lineWidth(line, footer.size)) / 2,
        f.bottom + 15,
        footer.size,
        MUTED,
      );
    }
    const left = fitCell(f, generated, width - pageW - 20, 8, 'regular', 1);
    drawSingle(furniture, left.lines[0] ?? EMPTY_LINE, f.left, baseline, left.size, MUTED);
    drawSingle(furniture, page, f.right - pageW, baseline, 8, MUTED);
    doc.endMarkedContent();
  }
}

/** Renders a sheet to PDF bytes. */
export function renderSheet(
  sheet: Sheet,
  template: RosterTemplate,
  opts: RenderOptions = {},
): Promise<Buffer> {
  const fonts = opts.fonts ?? unicodeFonts;
  const margin = template.page.margin;
  const doc = new PDFDocument({
    size: template.page.size,
    layout: template.page.orientation,
    margins: { top: margin, bottom: margin, left: margin, right: margin },
    bufferPages: true,
    autoFirstPage: false,
    // No default Helvetica: pdfkit would parse its AFM metrics for every document, and every run sets its face.
    font: null as unknown as string,
    displayTitle: true,
    // Tagged (a structure tree and /MarkInfo) in the sheet's language, for search, copy and screen readers; the
    // structure tree and ActualText need PDF 1.4 and 1.5.
    tagged: true,
    pdfVersion: '1.7',
    lang: template.locale,
    info: {
      Title: sheet.meta.title,
      Author: sheet.meta.author,
      Subject: sheet.meta.subject,
      Keywords: sheet.meta.keywords,
      Creator: 'rostercal',
      CreationDate: sheet.generatedAt,
    },
  });
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('data', (c: Buffer) => chunks.push(c));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });
  doc.addPage();
  const pageWidth = doc.page.width;
  const pageHeight = doc.page.height;
  const f: Frame = {
    doc,
    fonts,
    template,
    sheet,
    left: margin,
    right: pageWidth - margin,
    top: margin,
    bottom: pageHeight - margin - 22,
    widths: columnWidths(sheet.columns, pageWidth - 2 * margin),
    y: margin,
    floor: sheet.minTextSize,
    tags: doc.struct('Document'),
  };
  doc.addStructure(f.tags!);
  drawHeading(f);
  drawTableHeader(f);
  drawRows(f);
  f.y += 12;
  for (const block of sheet.after) {
    if (block === 'result') drawResult(f);
    else if (block === 'notes') drawNotes(f);
    else drawSignoff(f);
  }
  f.tags!.end();
  drawFooters(f);
  doc.end();
  return done;
}
