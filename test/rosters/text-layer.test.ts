// A roster's text layer says each name as written, whatever its script: pdfkit draws shaped scripts in visual glyph
// order (Devanagari's short i before its consonant, Thai and Arabic shaped, right-to-left runs reversed), so without
// ActualText search, copy and screen readers got "िववान िसंह" for "विवान सिंह". The PDFs are tagged (a structure
// tree, /MarkInfo, the document's language) and every line of text carries the text as written, on its structure
// element (Acrobat, screen readers, PDF.js) and as marked content in the page's content stream (poppler's pdftotext,
// PDFium in Chrome: issue 43 found "विवान सिंह" unsearchable there).
import { describe, expect, it } from 'vitest';
import { renderSheet } from '../../src/rosters/render.ts';
import { buildSheet } from '../../src/rosters/sheet.ts';
import { loadTemplate } from '../../src/rosters/template.ts';
import {
  containsText,
  contentStreamActualTexts,
  pagePng,
  pdfSpokenText,
  pdfText,
  qpdfCheck,
} from '../support/pdf.ts';

const RTL = /[\u0590-\u08FF]/;

import { sampleData } from './sample-data.ts';

/** Names as the upstream service writes them (first, last), one or more per script the issue names. */
const names: { script: string; first: string; last: string }[] = [
  { script: 'devanagari', first: 'विवान', last: 'सिंह' },
  { script: 'devanagari', first: 'अनन्या', last: 'शर्मा' },
  { script: 'thai', first: 'ณัฐวุฒิ', last: 'วงศ์สวัสดิ์' },
  { script: 'arabic', first: 'فاطمة', last: 'الزهراء' },
  { script: 'arabic', first: 'محمد', last: 'العلي' },
  { script: 'hebrew', first: 'נועה', last: 'כהן' },
  { script: 'chinese', first: '小明', last: '王' },
  { script: 'japanese', first: 'さくら', last: '渡辺' },
  { script: 'korean', first: '민준', last: '김' },
  { script: 'vietnamese', first: 'Nguyễn', last: 'Thị Minh Khai' },
  { script: 'vietnamese', first: 'Trần', last: 'Quốc Bảo' },
];

function dataWithNames() {
  const data = sampleData(20, true);
  names.forEach((n, i) => {
    const s = data.team.students[i]!;
    s.firstName = n.first;
    s.lastName = n.last;
  });
  return data;
}

describe('text layer: names as written (tagged PDF, ActualText)', () => {
  for (const templateName of ['team-roster', 'attendance-sheet', 'match-day-sheet']) {
    it(`${templateName}: every name extracts as the upstream writes it, in every script`, async () => {
      const template = loadTemplate(templateName);
      const pdf = await renderSheet(buildSheet(template, dataWithNames()), template);
      await qpdfCheck(pdf);
      const spoken = await pdfSpokenText(pdf);
      const wrong = names
        .map((n) => `${n.first} ${n.last}`)
        .filter((name) => !spoken.runs.includes(name))
        .map(
          (name) => `${name}: not in ${JSON.stringify(spoken.runs.filter((r) => !/^[\x20-\x7e]*$/.test(r)))}`,
        );
      expect({ tagged: spoken.tagged, lang: spoken.lang, wrong }).toEqual({
        tagged: true,
        lang: template.locale,
        wrong: [],
      });
    });
  }

  for (const templateName of ['team-roster', 'attendance-sheet', 'match-day-sheet']) {
    it(`${templateName}: every name reads right from the page's content stream too (what pdftotext and PDFium read)`, async () => {
      const template = loadTemplate(templateName);
      const pdf = await renderSheet(buildSheet(template, dataWithNames()), template);
      const actual = await contentStreamActualTexts(pdf);
      const glyphs = await pdfText(pdf, { layout: true });
      const wrong = names
        .map((n) => `${n.first} ${n.last}`)
        .filter((name) =>
          // Right-to-left names from their glyphs, drawn in visual order and reordered by the reader (a marked
          // sequence's ActualText would come out reversed in poppler); every other script as marked content's
          // ActualText, which replaces glyphs drawn out of reading order.
          RTL.test(name) ? actual.includes(name) || !containsText(glyphs, name) : !actual.includes(name),
        );
      expect(wrong, JSON.stringify(actual.slice(0, 40))).toEqual([]);
    });
  }

  it('the page looks as before and its glyphs still read back (PDF.js draws it without a warning)', async () => {
    const template = loadTemplate('attendance-sheet');
    const pdf = await renderSheet(buildSheet(template, dataWithNames()), template);
    await pagePng(pdf, 'text-layer-attendance');
    const text = await pdfText(pdf);
    expect(text).toContain('Attendance sheet');
    expect(text).toContain('Page 1 of 1');
  });
});
