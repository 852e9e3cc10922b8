// The pages' stylesheets and script, read from assets/ once at start. Each goes into its page inline (one request
// per page, nothing to cache or version) and is allowed by its sha256 hash in the page's CSP, computed here from
// the very bytes sent, so an edited file can never be blocked by a stale hash.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

export interface PageAsset {
  /** What goes between <style> or <script> and its end tag. */
  readonly text: string;
  /** The CSP source that allows exactly this text: 'sha256-…'. */
  readonly source: string;
}

/**
 * Fewer bytes on every page: indentation, blank lines and comments go, and a stylesheet's lines join where a
 * line ends a declaration, a block or a list item. Safe for these files because none holds a multi-line string
 * or template literal (the files are ours; loadAsset is not for anyone else's).
 */
function compact(text: string, kind: 'js' | 'css'): string {
  const lines = (kind === 'css' ? text.replace(/\/\*[\s\S]*?\*\//g, '') : text)
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !(kind === 'js' && line.startsWith('//')));
  if (kind === 'js') return lines.join('\n');
  return lines.reduce((out, line) => (out === '' || /[{};,]$/.test(out) ? out + line : `${out} ${line}`), '');
}

export function loadAsset(name: string): PageAsset {
  const kind = name.endsWith('.js') ? 'js' : 'css';
  const text = compact(readFileSync(new URL(`./assets/${name}`, import.meta.url), 'utf8'), kind);
  // An end tag inside would end the element early and let the rest be read as markup.
  if (/<\/(script|style)/i.test(text)) throw new Error(`web/assets/${name} holds an end tag`);
  return { text, source: `'sha256-${createHash('sha256').update(text).digest('base64')}'` };
}

export const ASSETS = {
  landingScript: loadAsset('landing.js'),
  landingStyle: loadAsset('landing.css'),
  absenceStyle: loadAsset('absence.css'),
  noticeStyle: loadAsset('notice.css'),
  staffStyle: loadAsset('staff.css'),
} as const;
