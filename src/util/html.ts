// The one way pages are written: html`…` escapes every value put into it (text and quoted attribute values
// alike) unless the value is SafeHtml, which only this module makes (from an html`…` template, or from markup a
// caller vouches for with trustedMarkup). A value in an attribute without quotes is refused when the template
// first runs: escaping cannot make an unquoted attribute safe. Hand-written rather than a library: the whole
// contract is these few lines, and the pages need nothing a template engine adds.

import { withoutControls } from './controls.ts';

/** Markup that is safe to send as it is: made only by html`…`, join() and trustedMarkup(). */
export class SafeHtml {
  readonly #text: string;
  /** Private by convention: use html`…` (the constructor cannot be hidden from TypeScript's structural checks). */
  constructor(text: string, key: typeof MINT) {
    if (key !== MINT) throw new TypeError('SafeHtml is made by html`…`, not by new');
    this.#text = text;
  }
  toString(): string {
    return this.#text;
  }
}

const MINT: unique symbol = Symbol('SafeHtml');

/** What a template takes: text (escaped), numbers, SafeHtml (as it is), lists of these; false/null/undefined say nothing. */
export type HtmlValue = SafeHtml | string | number | false | null | undefined | readonly HtmlValue[];

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/**
 * Text as HTML: safe in element content and in a quoted attribute value, without controls or overrides (the one
 * gate, util/controls.ts): text from a school's system may carry them, and an override reverses what follows it on
 * the page, our own words included (seen: an upstream staff name reversed the rest of an /admin/audit row); a CR
 * rewrites the line of whoever reads the answer in a terminal. Line feeds and tabs are whitespace to HTML: kept.
 */
export function escapeHtml(text: string): string {
  return withoutControls(text, { replacement: '', lines: true }).replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

function render(value: HtmlValue): string {
  if (value instanceof SafeHtml) return value.toString();
  if (value === false || value === null || value === undefined) return '';
  if (Array.isArray(value)) return value.map(render).join('');
  // Anything else (a number; an object the types let through) is text.
  return escapeHtml(String(value));
}

/** Templates already checked (one per place in the code: the strings array is the same object each time). */
const checked = new WeakSet<TemplateStringsArray>();

/**
 * Walks the template's own text (values are escaped, so they cannot open or close a quote or a tag) and refuses a
 * value that would start or continue an attribute value without quotes. A value inside a quoted attribute is fine
 * wherever it falls in it, after a `=` too (`href="/auth/login?returnTo=${…}"`): looking only at a trailing `=`
 * took that for an unquoted attribute and made /admin/login answer 500 whenever OpenID sign-in was configured.
 */
function check(strings: TemplateStringsArray): void {
  let state: 'text' | 'tag' | 'after =' | 'unquoted' | '"' | "'" = 'text';
  for (let i = 0; i < strings.length - 1; i++) {
    const piece = strings[i]!;
    for (let at = 0; at < piece.length; at++) {
      const c = piece[at]!;
      const space = /\s/.test(c);
      if (state === 'text') {
        if (c === '<' && /[a-zA-Z/!?]/.test(piece[at + 1] ?? '')) state = 'tag';
      } else if (state === 'tag') {
        if (c === '>') state = 'text';
        else if (c === '=') state = 'after =';
        else if (c === '"' || c === "'") state = c;
      } else if (state === 'after =') {
        if (c === '>') state = 'text';
        else if (c === '"' || c === "'") state = c;
        else if (!space) state = 'unquoted';
      } else if (state === 'unquoted') {
        if (c === '>') state = 'text';
        else if (space) state = 'tag';
      } else if (c === state) state = 'tag';
    }
    if (state === 'after =' || state === 'unquoted')
      throw new Error(
        `html\`…\`: a value after "${piece.slice(-40)}" is an unquoted attribute; put it in quotes`,
      );
  }
  checked.add(strings);
}

export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  if (!checked.has(strings)) check(strings);
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]!) + strings[i + 1]!;
  return new SafeHtml(out, MINT);
}

/** Parts joined by a separator (text separators are escaped like any value). */
export function join(parts: readonly HtmlValue[], separator: HtmlValue = ''): SafeHtml {
  const sep = render(separator);
  return new SafeHtml(parts.map(render).join(sep), MINT);
}

/**
 * Markup written by code the caller trusts, not by data: the QR code's SVG (made from the page's own URL), a
 * stylesheet or script of ours (assets/). Never for text that came from a school's system or a request.
 */
export function trustedMarkup(markup: string): SafeHtml {
  return new SafeHtml(markup, MINT);
}
