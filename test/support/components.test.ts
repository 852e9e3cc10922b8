// The test components themselves: each one works from npm alone, and each one that cannot work says so by name.
import PDFDocument from 'pdfkit';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { launchBrowser } from './browser.ts';
import { pagePng, pdfInfo, pdfText, qpdfCheck } from './pdf.ts';
import { createTestDatabase } from './pg.ts';

async function samplePdf(): Promise<Buffer> {
  const doc = new PDFDocument({ info: { Title: 'Probe', Author: 'rostercal tests' } });
  const chunks: Buffer[] = [];
  doc.on('data', (c: Buffer) => chunks.push(c));
  const done = new Promise((resolve) => doc.on('end', resolve));
  doc.fontSize(12).text('Left cell', 50, 100);
  doc.text('Right cell', 300, 100);
  doc.addPage().text('Second page', 50, 100);
  doc.end();
  await done;
  return Buffer.concat(chunks);
}

describe('PostgreSQL for tests', () => {
  const saved = process.env.TEST_DATABASE_URL;
  afterAll(() => {
    if (saved === undefined) delete process.env.TEST_DATABASE_URL;
    else process.env.TEST_DATABASE_URL = saved;
  });

  it('makes a fresh database on the run’s server and drops it', async () => {
    const db = await createTestDatabase();
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    const { rows } = await client.query<{ v: number }>(
      "select current_setting('server_version_num')::int as v",
    );
    await client.end();
    // Ours is PostgreSQL 18; a server named by TEST_DATABASE_URL may be older.
    expect(rows[0]!.v).toBeGreaterThanOrEqual(saved ? 120000 : 180000);
    await db.drop();
    await expect(
      (async () => {
        const c = new pg.Client({ connectionString: db.url });
        await c.connect();
      })(),
    ).rejects.toThrow(/does not exist/);
  });

  it('fails naming PostgreSQL when the server named is unreachable', async () => {
    process.env.TEST_DATABASE_URL = 'postgres://postgres@127.0.0.1:9/postgres';
    await expect(createTestDatabase()).rejects.toThrow(
      /PostgreSQL is not reachable at postgres:\/\/…@127\.0\.0\.1:9/,
    );
  });
});

describe('Chromium for tests', () => {
  it('fails naming Chromium when CHROMIUM_PATH names nothing', async () => {
    const saved = process.env.CHROMIUM_PATH;
    process.env.CHROMIUM_PATH = '/nonexistent/chromium';
    try {
      // The run's prepared Chromium is not used when the test asks for another one.
      const { installChromium } = await import('./chromium.ts');
      await expect(installChromium()).rejects.toThrow(/Chromium: CHROMIUM_PATH=\/nonexistent\/chromium/);
    } finally {
      if (saved === undefined) delete process.env.CHROMIUM_PATH;
      else process.env.CHROMIUM_PATH = saved;
    }
  });

  it('launches and renders a page', async () => {
    const browser = await launchBrowser();
    try {
      const page = await browser.newPage();
      await page.setContent('<p>ready</p>');
      expect(await page.textContent('p')).toBe('ready');
    } finally {
      await browser.close();
    }
  });
});

describe('PDF reading for tests', () => {
  it('reads text per page, cells apart or on one row, and the document info', async () => {
    const pdf = await samplePdf();
    expect(await pdfText(pdf, { page: 1 })).toBe('Left cell\nRight cell\n');
    expect(await pdfText(pdf, { page: 1, layout: true })).toBe('Left cell  Right cell\n');
    expect(await pdfText(pdf)).toBe('Left cell\nRight cell\n\fSecond page\n');
    expect(await pdfInfo(pdf)).toMatchObject({ Pages: '2', Title: 'Probe', Author: 'rostercal tests' });
    await qpdfCheck(pdf);
    expect(await pagePng(pdf, 'probe')).toMatch(/probe\.png$/);
  });

  it('qpdfCheck rejects a damaged cross-reference table and a truncated file', async () => {
    const pdf = await samplePdf();
    const text = pdf.toString('latin1');
    // Move the offset of the first object in the xref table by one byte.
    const xref = text.lastIndexOf('\nxref\n');
    const entry = text.indexOf(' 00000 n', xref) - 10;
    const offset = Number(text.slice(entry, entry + 10));
    const damaged = Buffer.from(
      text.slice(0, entry) + String(offset + 1).padStart(10, '0') + text.slice(entry + 10),
      'latin1',
    );
    await expect(qpdfCheck(damaged)).rejects.toThrow(/qpdf --check failed/);
    await expect(qpdfCheck(pdf.subarray(0, Math.floor(pdf.length * 0.6)))).rejects.toThrow(
      /qpdf --check failed/,
    );
  });
});
