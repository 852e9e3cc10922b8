// The pages' stylesheets and script, read from assets/ once at start. Each goes into its page inline (one request
// per page, nothing to cache or version) and is allowed by its sha256 hash in the page's CSP, computed here from
// the very bytes sent, so an edited file can never be blocked by a stale hash. Sent as written: a line-dropping
// "minifier" here once saved ~4.6 KB a landing page, and would have cut a string or template literal holding a
// line that starts with //; a page's bytes are better saved by compressing the page.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

export interface PageAsset {
  /** What goes between <style> or <script> and its end tag. */
  readonly text: string;
  /** The CSP source that allows exactly this text: 'sha256-…'. */
  readonly source: string;
}

export function loadAsset(name: string): PageAsset {
  const text = readFileSync(new URL(`./assets/${name}`, import.meta.url), 'utf8');
  // An end tag inside would end the element early and let the rest be read as markup.
  if (/<\/(script|style)/i.test(text)) throw new Error(`web/assets/${name} holds an end tag`);
  return { text, source: `'sha256-${createHash('sha256').update(text).digest('base64')}'` };
}

export const ASSETS = {
  landingScript: loadAsset('landing.js'),
  copyScript: loadAsset('copy.js'),
  landingStyle: loadAsset('landing.css'),
  absenceStyle: loadAsset('absence.css'),
  noticeStyle: loadAsset('notice.css'),
  staffStyle: loadAsset('staff.css'),
} as const;
