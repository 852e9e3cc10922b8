// axe-core (Deque's accessibility engine, from npm) run inside a page in Chromium: the WCAG 2.0, 2.1 and 2.2 A and AA
// rules. Returns the violations (rule id, impact and the first few elements), so a test can expect none and print
// what was found.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from './browser.ts';

const require = createRequire(import.meta.url);
const source = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeResult {
  violations: { id: string; impact: string | null; nodes: string[] }[];
  /** How many rules ran and passed (to tell a run that checked something from one that checked nothing). */
  passes: number;
}

export const WCAG22_AA = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'];

export async function axe(page: Page): Promise<AxeResult> {
  // As a script the page's CSP does not govern (Playwright evaluates it through the DevTools protocol).
  await page.evaluate(source);
  return page.evaluate<AxeResult>(`
    axe.run(document, { runOnly: { type: 'tag', values: ${JSON.stringify(WCAG22_AA)} } }).then((r) => ({
      passes: r.passes.length,
      violations: r.violations.map((v) => ({
        id: v.id,
        impact: v.impact,
        nodes: v.nodes.slice(0, 3).map((n) => n.target.join(' ') + ': ' + n.failureSummary),
      })),
    }))`);
}
