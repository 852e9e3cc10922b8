// The medical and guardian sheet is read in an emergency: every line at a readable size (wrapped, never shrunk),
// each phone number on a line of its own, and the conditions that need action first and marked.
import { describe, expect, it } from 'vitest';
import { renderSheet } from '../../src/rosters/render.ts';
import { buildSheet } from '../../src/rosters/sheet.ts';
import { loadTemplate } from '../../src/rosters/template.ts';
import { pagePng, pdfText, pdfTextItems, qpdfCheck } from '../support/pdf.ts';
import { sampleData } from './sample-data.ts';

// What the sandbox's students carry (name and notes, joined by the normaliser), long guardian e-mails included.
function emergencyData() {
  const data = sampleData(14, true);
  data.team.students.forEach((s, i) => {
    s.medicalConditions =
      i % 3 === 0
        ? ['Hay fever', 'Type 1 diabetes: Check glucose before training']
        : i % 3 === 1
          ? ['Asthma: Reliever inhaler kept in bag', 'Coeliac disease: Gluten-free food on trips']
          : [];
    s.guardians = [
      {
        name: `Alexandra ${s.lastName}-Montgomery`,
        relationship: 'Mother',
        phone: `0412 345 ${String(100 + i)}`,
        email: `alexandra.montgomery.family${i}@family.example.com`,
      },
      {
        name: `Christopher ${s.lastName}`,
        relationship: 'Grandparent',
        phone: `+61 2 9876 ${String(5400 + i)}`,
        email: `christopher.${i}@work-address.example.com.au`,
      },
    ];
  });
  return data;
}

describe('medical and guardian sheet', () => {
  const template = loadTemplate('medical-and-guardian-contacts');

  it('prints no text under 9 pt: long contacts and conditions wrap instead of shrinking', async () => {
    const data = emergencyData();
    const pdf = await renderSheet(buildSheet(template, data), template);
    await qpdfCheck(pdf);
    await pagePng(pdf, 'medical-sheet');
    const items = await pdfTextItems(pdf);
    expect(items.length).toBeGreaterThan(100);
    const small = items.filter((it) => it.size < 9 - 1e-6).map((it) => `${it.size.toFixed(2)} pt: ${it.str}`);
    expect(small).toEqual([]);
    // And every condition and contact still prints whole.
    const text = await pdfText(pdf);
    const flat = text.replace(/\s+/g, ' ');
    for (const s of data.team.students) {
      for (const g of s.guardians) expect(flat).toContain(g.email!);
    }
    expect(flat).toContain('Type 1 diabetes: Check glucose before training');
  });

  it('puts each phone number on a line of its own', async () => {
    const data = emergencyData();
    const pdf = await renderSheet(buildSheet(template, data), template);
    const lines = new Set(
      (await pdfText(pdf, { layout: true }))
        .split('\n')
        .flatMap((l) => l.split(/ {2,}/))
        .map((l) => l.trim()),
    );
    for (const s of data.team.students) for (const g of s.guardians) expect(lines).toContain(g.phone);
  });

  it('lists the conditions that need action first, marked, and the rest after', () => {
    const data = emergencyData();
    const sheet = buildSheet(template, data);
    const col = sheet.columns.findIndex((c) => c.field === 'medical');
    const cellOf = (i: number) => {
      const c = sheet.rows.find((r) => r.studentId === data.team.students[i]!.studentId)!.cells[col]!;
      return c.kind === 'text' ? c.text.split('\n') : [];
    };
    expect(cellOf(0)).toEqual(['! Type 1 diabetes: Check glucose before training', 'Hay fever']);
    expect(cellOf(1)).toEqual([
      '! Asthma: Reliever inhaler kept in bag',
      'Coeliac disease: Gluten-free food on trips',
    ]);
    expect(sheet.footer).toMatch(/! = needs action/);
  });

  it('keeps the year and number columns narrow, leaving the width to conditions and contacts', () => {
    const sheet = buildSheet(template, emergencyData());
    const width = (f: string) => sheet.columns.find((c) => c.field === f)!.width;
    expect(width('number')).toBeLessThanOrEqual(24);
    expect(width('yearGroup')).toBeLessThanOrEqual(44);
  });
});
