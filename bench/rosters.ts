// npm run bench:rosters — PDF roster rendering.
//   1. median time for a 40-student team roster (names in every script the fonts cover),
//   2. median time for a 40-student attendance sheet,
//   3. total time to write every visible team's roster at `school` scale (sandbox → pull → SQLite → PDFs),
// each against the baseline of the same table drawn with pdfkit's built-in Helvetica and no embedded fonts,
// measured in the same run, interleaved so machine load hits both alike. CPU time is printed beside wall time
// because this machine is shared. Goals: 40-student roster ≤ 50 ms median; ratio ≤ 2; whole school ≤ 10 s.
// What our subsetter (rosters/subset.ts, subset-cff.ts) buys, in the same run (issue 45): the same documents drawn
// with the same faces and layout cache, subset by fontkit's own subsetters (what pdfkit does unaided), once with
// each subset cached per font and glyph set (the library's best case: a roster printed again costs no subsetting)
// and once without the cache.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Font } from 'fontkit';
import { parseSchool } from '../src/config.ts';
import { type FontSet, preloadFonts, standardFonts, unicodeFontSet } from '../src/rosters/fonts.ts';
import { generateRoster, visibleTeams } from '../src/rosters/index.ts';
import { renderSheet } from '../src/rosters/render.ts';
import { buildSheet } from '../src/rosters/sheet.ts';
import { forPdfkit, type PdfkitSubset } from '../src/rosters/subset.ts';
import { GlyphList } from '../src/rosters/subset-glyphs.ts';
import { loadTemplate } from '../src/rosters/template.ts';
import { SCHOOL_TIME_ZONE, startSandbox } from '../src/sandbox/index.ts';
import { openStore } from '../src/store/index.ts';
import { pullSchool } from '../src/sync/pull.ts';
import { createUpstreamClient } from '../src/upstream/client.ts';
import { sampleData } from '../test/rosters/sample-data.ts';

const RUNS = 30;
const WARMUP = 5;
const standard = standardFonts();

/**
 * The faces as forPdfkit wraps them (its layout cache included), but subset by fontkit's own subsetter; with
 * `cached`, each encoded subset is kept per font and glyph list (glyph ids in order of use, as pdfkit numbers them).
 */
function fontkitSubsets(cached: boolean) {
  return (font: Font, bytes: Uint8Array): Font => {
    const wrapped = forPdfkit(font, bytes);
    const library = Object.create(wrapped) as Font;
    const encoded = new Map<string, Uint8Array>();
    const own = font as unknown as { createSubset(): PdfkitSubset };
    Object.defineProperty(library, 'createSubset', {
      value(): PdfkitSubset {
        const subset = own.createSubset();
        const list = new GlyphList();
        return {
          cff: subset.cff,
          includeGlyph: (g) => list.include(g),
          encode() {
            const key = list.glyphs.join(',');
            let bytes = cached ? encoded.get(key) : undefined;
            if (!bytes) {
              for (const g of list.glyphs) subset.includeGlyph(g);
              bytes = subset.encode();
              if (cached) encoded.set(key, bytes);
            }
            return bytes;
          },
        };
      },
    });
    return library;
  };
}
const fontkitCached = unicodeFontSet('fontkit-cached', fontkitSubsets(true), 'fkc');
const fontkitPlain = unicodeFontSet('fontkit', fontkitSubsets(false), 'fk');

function median(xs: number[]): number {
  const s = xs.slice().sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

interface Sample {
  wall: number;
  cpu: number;
}

async function sample(fn: () => Promise<unknown>): Promise<Sample> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await fn();
  const c = process.cpuUsage(c0);
  return { wall: performance.now() - t0, cpu: (c.user + c.system) / 1000 };
}

async function compare(label: string, templateName: string, students: number, withSession: boolean) {
  const template = loadTemplate(templateName, { dir: null });
  const data = sampleData(students, withSession);
  const ours: Sample[] = [];
  const base: Sample[] = [];
  const cached: Sample[] = [];
  const plain: Sample[] = [];
  const draw = (fonts?: FontSet) => () =>
    renderSheet(buildSheet(template, data), template, fonts && { fonts });
  for (let i = 0; i < WARMUP + RUNS; i++) {
    // The sheet is rebuilt each time: that is part of producing a roster.
    const a = await sample(draw());
    const b = await sample(draw(standard));
    const c = await sample(draw(fontkitCached));
    const d = await sample(draw(fontkitPlain));
    if (i >= WARMUP) {
      ours.push(a);
      base.push(b);
      cached.push(c);
      plain.push(d);
    }
  }
  const lib = (xs: Sample[]) => median(xs.map((s) => s.wall));
  const libCpu = (xs: Sample[]) => median(xs.map((s) => s.cpu));
  const w = median(ours.map((s) => s.wall));
  const wb = median(base.map((s) => s.wall));
  const c = median(ours.map((s) => s.cpu));
  const cb = median(base.map((s) => s.cpu));
  console.log(
    `${label.padEnd(34)} median ${w.toFixed(1).padStart(6)} ms wall, ${c.toFixed(1).padStart(6)} ms CPU` +
      ` | baseline ${wb.toFixed(1).padStart(6)} ms wall, ${cb.toFixed(1).padStart(6)} ms CPU` +
      ` | ratio ${(w / wb).toFixed(2)} wall, ${(c / cb).toFixed(2)} CPU`,
  );
  console.log(
    `${'  subset by fontkit instead'.padEnd(34)} median ${lib(plain).toFixed(1).padStart(6)} ms wall, ${libCpu(plain).toFixed(1).padStart(6)} ms CPU (${(libCpu(plain) / c).toFixed(2)}× ours CPU)` +
      ` | cached per font and glyph set ${lib(cached).toFixed(1).padStart(6)} ms wall, ${libCpu(cached).toFixed(1).padStart(6)} ms CPU (${(libCpu(cached) / c).toFixed(2)}× ours CPU)`,
  );
  return { w, wb };
}

async function wholeSchool() {
  const now = '2026-11-20T00:00:00.000Z';
  const sb = await startSandbox({ scale: 'school', seed: 42, now });
  const dir = mkdtempSync(join(tmpdir(), 'rostercal-bench-rosters-'));
  const store = await openStore({ dataDir: dir });
  try {
    const client = createUpstreamClient({
      baseUrl: sb.url,
      token: sb.token,
      rateLimit: { requestsPerSecond: 2000, concurrency: 8 },
    });
    const school = parseSchool({
      id: 'bench',
      name: 'Bench School',
      upstream: { url: sb.url, token: sb.token },
      timeZone: SCHOOL_TIME_ZONE,
    });
    const t0 = performance.now();
    const summary = await pullSchool({ store, client, school, kind: 'full', now: () => new Date(now) });
    console.log(
      `(pull of the school-scale sandbox: ${summary.status}, ${((performance.now() - t0) / 1000).toFixed(1)} s)`,
    );
    const { teams } = await visibleTeams(store, 'bench');
    const students = teams.reduce((n, t) => n + t.students.length, 0);
    const out = join(dir, 'out');
    mkdirSync(out);
    const run = async (fonts: typeof standard | undefined) => {
      const c0 = process.cpuUsage();
      const t = performance.now();
      let bytes = 0;
      for (const team of teams) {
        const r = await generateRoster(store, {
          schoolId: 'bench',
          teamId: team.id,
          template: 'team-roster',
          fonts,
          dir: null,
        });
        writeFileSync(join(out, r.fileName), r.pdf);
        bytes += r.pdf.length;
      }
      const c = process.cpuUsage(c0);
      return { wall: performance.now() - t, cpu: (c.user + c.system) / 1000, bytes };
    };
    await run(undefined); // warm caches (store pages, fonts, layout) for both sides alike
    const ours = await run(undefined);
    const base = await run(standard);
    preloadFonts(fontkitCached);
    const library = await run(fontkitCached); // each team's glyph set is its own: the cache is cold for each
    const again = await run(fontkitCached); // every roster printed a second time: all cached
    console.log(
      `${`every team's roster (${teams.length} teams, ${students} places)`.padEnd(34)} total ${(ours.wall / 1000).toFixed(2)} s wall, ${(ours.cpu / 1000).toFixed(2)} s CPU, ${(ours.bytes / 1e6).toFixed(1)} MB` +
        ` | baseline ${(base.wall / 1000).toFixed(2)} s wall, ${(base.cpu / 1000).toFixed(2)} s CPU, ${(base.bytes / 1e6).toFixed(1)} MB` +
        ` | ratio ${(ours.wall / base.wall).toFixed(2)} wall, ${(ours.cpu / base.cpu).toFixed(2)} CPU`,
    );
    console.log(
      `${'  subset by fontkit instead'.padEnd(34)} total ${(library.wall / 1000).toFixed(2)} s wall, ${(library.cpu / 1000).toFixed(2)} s CPU, ${(library.bytes / 1e6).toFixed(1)} MB (${(library.cpu / ours.cpu).toFixed(2)}× ours CPU)` +
        ` | printed again, from its cache ${(again.wall / 1000).toFixed(2)} s wall, ${(again.cpu / 1000).toFixed(2)} s CPU (${(again.cpu / ours.cpu).toFixed(2)}× ours CPU)`,
    );
    return ours.wall;
  } finally {
    await store.close();
    await sb.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const tp = performance.now();
preloadFonts();
preloadFonts(fontkitCached);
preloadFonts(fontkitPlain);
console.log(`fonts parsed once per process: ${(performance.now() - tp).toFixed(0)} ms`);
const roster = await compare('40-student team roster', 'team-roster', 40, false);
const attendance = await compare('40-student attendance sheet', 'attendance-sheet', 40, true);
const school = await wholeSchool();
console.log(
  `goals: roster median ${roster.w.toFixed(1)} ms (≤ 50 ms: ${roster.w <= 50 ? 'met' : 'NOT met'}); ` +
    `ratio ${(roster.w / roster.wb).toFixed(2)} / ${(attendance.w / attendance.wb).toFixed(2)} (≤ 2: ${Math.max(roster.w / roster.wb, attendance.w / attendance.wb) <= 2 ? 'met' : 'NOT met'}); ` +
    `whole school ${(school / 1000).toFixed(2)} s (≤ 10 s: ${school <= 10_000 ? 'met' : 'NOT met'})`,
);
