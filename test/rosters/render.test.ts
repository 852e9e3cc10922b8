// Rendering from hand-built roster data: every script prints, long rosters page correctly, text fits its cells.
// (test/rosters/pipeline.test.ts renders the same templates from a generated school through sandbox → pull → store.)
import { statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { unicodeFonts } from '../../src/rosters/fonts.ts';
import { renderSheet } from '../../src/rosters/render.ts';
import { buildSheet } from '../../src/rosters/sheet.ts';
import { loadTemplate } from '../../src/rosters/template.ts';
import { fitText, lineWidth } from '../../src/rosters/text.ts';
import { containsText, pagePng, pdfInfo, pdfText, qpdfCheck } from '../support/pdf.ts';
import { multiScriptNames, sampleData } from './sample-data.ts';

async function render(templateName: string, size: number, withSession: boolean) {
  const template = loadTemplate(templateName);
  const data = sampleData(size, withSession);
  const pdf = await renderSheet(buildSheet(template, data), template);
  return { pdf, data, template };
}

describe('roster rendering (hand-built data)', () => {
  it('prints every student, in every script, on each shipped template', async () => {
    for (const [name, session] of [
      ['team-roster', false],
      ['attendance-sheet', true],
      ['match-day-sheet', true],
      ['medical-and-guardian-contacts', true],
    ] as const) {
      const { pdf, data } = await render(name, 24, session);
      await qpdfCheck(pdf);
      await pagePng(pdf, `hand-built-${name}`);
      const text = await pdfText(pdf);
      for (const s of data.team.students) {
        expect(
          containsText(text, `${s.firstName} ${s.lastName}`),
          `${name}: ${s.firstName} ${s.lastName}`,
        ).toBe(true);
      }
      for (const n of multiScriptNames)
        expect(containsText(text, n.first), `${name}: ${n.script}`).toBe(true);
      expect(text).toContain('St Aidan’s College');
      expect(text).toContain('Senior Girls Football A');
    }
  });

  it('embeds a font for each script and draws nothing with the missing glyph', async () => {
    const { pdf } = await render('team-roster', 20, false);
    const text = await pdfText(pdf);
    // A missing glyph comes back from text extraction as U+FFFD or as nothing at all; neither may happen.
    expect(text).not.toContain('\ufffd');
    for (const n of multiScriptNames) {
      for (const ch of n.first.normalize('NFC')) {
        expect(unicodeFonts.canDraw(ch.codePointAt(0)!, 'regular'), `${n.script} ${ch}`).toBe(true);
      }
    }
    const png = await pagePng(pdf, 'multi-script');
    expect(statSync(png).size).toBeGreaterThan(10_000);
  });

  it('keeps right-to-left names in reading order and shaped', async () => {
    const { pdf } = await render('team-roster', 12, false);
    const raw = await pdfText(pdf, { layout: true });
    // PDF.js reorders right-to-left runs back to logical order (in presentation forms, folded by NFKC).
    const logical = raw.normalize('NFKC').replace(/[\u202a-\u202e]/g, '');
    expect(logical).toContain('فاطمة الزهراء');
    expect(logical).toContain('محمد العلي');
  });

  it('flows 150 students over several pages with the table header and "Page x of y" on each', async () => {
    const { pdf, data } = await render('team-roster', 150, false);
    await qpdfCheck(pdf);
    const pages = Number((await pdfInfo(pdf)).Pages);
    expect(pages).toBeGreaterThanOrEqual(3);
    for (let p = 1; p <= pages; p++) {
      const text = await pdfText(pdf, { page: p });
      expect(text).toContain(`Page ${p} of ${pages}`);
      expect(text).toContain('Legal name');
      expect(text).toContain('Position');
      expect(text).toContain('St Aidan’s College');
      expect(text).toContain('Generated 23 Nov 2026, 09:30 (Australia/Sydney)');
      if (p > 1) expect(text).toContain('(continued)');
    }
    const all = await pdfText(pdf);
    for (const s of data.team.students) expect(containsText(all, `${s.firstName} ${s.lastName}`)).toBe(true);
    // Row numbers run 1..150 without a gap across the page breaks.
    for (let i = 1; i <= 150; i++) expect(all).toMatch(new RegExp(`(^|\\n)${i}\\n`));
  });

  it('keeps the end of an attendance sheet with its table: 30 students fit one page with the signature line', async () => {
    // Counted from the PDF's page objects, so the check needs no PDF tool.
    const pages = (pdf: Buffer) => pdf.toString('latin1').match(/\/Type \/Page\b(?!s)/g)?.length ?? 0;
    const template = loadTemplate('attendance-sheet');
    for (const n of [28, 29, 30]) {
      const pdf = await renderSheet(buildSheet(template, sampleData(n, true)), template);
      expect(pages(pdf), `${n} students`).toBe(1);
    }
    // Longer sheets break with at least two students on the last page, never blank rows alone.
    const bare = { ...template, blankRows: 0, after: [] as typeof template.after };
    for (let n = 31; n <= 70; n += 3) {
      const data = sampleData(n, true);
      const full = pages(await renderSheet(buildSheet(template, data), template));
      const studentsOnly = pages(await renderSheet(buildSheet(bare, data), bare));
      expect(full - studentsOnly, `${n} students`).toBeLessThanOrEqual(1);
    }
  });

  it('sets the PDF title and author', async () => {
    const { pdf } = await render('match-day-sheet', 10, true);
    const info = await pdfInfo(pdf);
    expect(info.Title).toBe('Match-day team sheet: Senior Girls Football A (Thu, 26 Nov 2026)');
    expect(info.Author).toBe('St Aidan’s College');
  });

  it('wraps or shrinks long text and never lets it overflow its width', () => {
    const long = 'Maximiliana-Alexandrina Featherstonehaugh-Cholmondeley-Wolfeschlegelsteinhausenbergerdorff';
    for (const width of [40, 80, 120, 200]) {
      const fitted = fitText(long, width, {
        fonts: unicodeFonts,
        weight: 'regular',
        size: 10,
        minSize: 7,
        maxLines: 2,
      });
      expect(fitted.size).toBeGreaterThanOrEqual(7);
      for (const line of fitted.lines) expect(lineWidth(line, fitted.size)).toBeLessThanOrEqual(width + 1e-6);
    }
    const short = fitText('Ava Jones', 200, {
      fonts: unicodeFonts,
      weight: 'regular',
      size: 10,
      minSize: 7,
      maxLines: 2,
    });
    expect(short).toMatchObject({ size: 10 });
    expect(short.lines).toHaveLength(1);
  });
});
