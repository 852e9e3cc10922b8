// The one gate for characters that act instead of showing: C0 and C1 controls (ESC and CSI start colour, cursor
// and screen sequences, OSC sets a terminal's title, BEL rings, CR rewrites the line, BS erases), bidi marks,
// embeddings, overrides and isolates (U+202E reverses what follows it, our own words included), and the line and
// paragraph separators. Text from the school's system may carry any of them, and it leaves the service on many
// paths: what commands print (terminal.ts), log lines (log.ts), pages and refusals (util/html.ts escapes every
// value through here), JSON answers (terminal.ts escapeForTerminal). Each cleans with this class, so a character
// added here is gone from all of them. (The calendar's own gate, calendar/gate.ts, removes more: invisible
// characters that would hide a name from the name filter.)

/** C1 controls (and DEL), bidi marks, embeddings, overrides and isolates, line and paragraph separators. */
const BEYOND_C0 = '\\u007f-\\u009f\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069\\u2028\\u2029';
/** Every C0 control, tabs and line feeds included, and the rest. */
const CONTROLS = new RegExp(`[\\u0000-\\u001f${BEYOND_C0}]`, 'g');
/** The same but line feeds and tabs: whitespace to HTML, kept where a page shows lines (pre-line, textarea). */
const CONTROLS_BUT_LINES = new RegExp(`[\\u0000-\\u0008\\u000b-\\u001f${BEYOND_C0}]`, 'g');
/** What JSON.stringify leaves raw in its strings (it escapes U+0000-U+001F itself). */
const CONTROLS_JSON_KEEPS = new RegExp(`[${BEYOND_C0}]`, 'g');

/**
 * The text with every control and bidi-control character replaced by `replacement` (a space for a terminal, where
 * an upstream CR/LF must not start a line; nothing for a page). `lines: true` keeps line feeds and tabs.
 */
export function withoutControls(text: string, opts: { replacement?: string; lines?: boolean } = {}): string {
  return text.replace(opts.lines ? CONTROLS_BUT_LINES : CONTROLS, opts.replacement ?? ' ');
}

/** JSON text with what JSON leaves raw of the class above escaped as `\uXXXX`: the same JSON value. */
export function escapeControlsInJson(json: string): string {
  return json.replace(CONTROLS_JSON_KEEPS, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
