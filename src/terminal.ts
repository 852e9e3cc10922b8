// The one way rostercal's commands print. Text from upstream (team, activity, session, location, student and staff
// names, error messages) reaches an operator's terminal inside what commands print: control characters would let
// it forge lines (CR/LF: a team name once printed a fake `BEGIN:VEVENT` line), rewrite what is shown or clear the
// screen (ESC and C1 sequences) or reverse it (bidi overrides such as U+202E). So:
// - `printLines` takes each line as one element and replaces every control and bidi-control character in it,
//   whatever put it there: an upstream CR/LF inside a value becomes a space and can never start a line of its own;
// - `printJson` prints JSON whose strings escape those characters (`\u202e`): the same JSON value, nothing lost;
// - `terminalSafe` is that cleaning, for text drawn elsewhere (a progress line rewritten in place).
// Commands (src/cli/, src/main.ts) may not use `console` (biome.json): everything they print passes here.
// Which characters are cleaned is decided once, in util/controls.ts, for pages and JSON answers too.
import { escapeControlsInJson, withoutControls } from './util/controls.ts';

/** The text with every control and bidi-control character replaced by a space (tabs and newlines too). */
export function terminalSafe(text: string): string {
  return withoutControls(text);
}

/**
 * A closing tag, a comment or doctype, or an element a page is made of: the text is a page (a proxy's or a CDN's
 * error page), not words. Not any `<word>`: a message's placeholder ("Authorization: Bearer <token>") is words,
 * and taking it for a tag cut it out of the sentence.
 */
const MARKUP =
  /<(?:\/[a-z]|!|(?:html|head|body|title|meta|link|style|script|h[1-6]|p|div|span|pre|center|hr|br|a|table)[\s/>])/i;
const PAGE_WORDS = 100;
const ENTITIES: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
  '#39': "'",
};

/**
 * An answer's text as one short line for a person: a page's words without its markup (its `<title>` where it has
 * one, else its text without styles, scripts and comments, cut at PAGE_WORDS: past that a page is boilerplate),
 * terminalSafe, spaces collapsed, cut at `max`. A proxy's 502 page prints as `502 Bad Gateway`, not as 200
 * characters of HTML.
 */
export function plainLine(text: string, max = 200): string {
  let words = text;
  const page = MARKUP.test(text);
  if (page) {
    const title = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(text)?.[1]?.trim();
    words = (
      title ||
      text
        .replace(/<(script|style)\b[\s\S]*?<\/\1\s*>/gi, ' ')
        .replace(/<!--[\s\S]*?-->/g, ' ')
        .replace(/<[^>]*>/g, ' ')
    ).replace(/&(#39|[a-z]+);/gi, (m, name: string) => ENTITIES[name.toLowerCase()] ?? m);
  }
  const line = terminalSafe(words).replace(/\s+/g, ' ').trim();
  const limit = page ? Math.min(max, PAGE_WORDS) : max;
  return line.length > limit ? `${line.slice(0, limit - 1)}…` : line;
}

/**
 * JSON text (JSON.stringify's, a log line) with the characters a terminal acts on that JSON leaves raw in its
 * strings escaped as `\uXXXX`: the same JSON value.
 */
export function escapeForTerminal(json: string): string {
  return escapeControlsInJson(json);
}

/** JSON.stringify, terminal-safe (escapeForTerminal). */
export function terminalJson(value: unknown, indent?: number): string {
  return escapeForTerminal(JSON.stringify(value, null, indent) ?? 'null');
}

export type Stream = 'stdout' | 'stderr';

function streamOf(to: Stream): NodeJS.WriteStream {
  return to === 'stdout' ? process.stdout : process.stderr;
}

/**
 * Once whoever reads a stream has gone (`rostercal feeds list | head`, a pager quit early), what the command
 * still prints is dropped and the command finishes what it was doing: a sync piped into `head` must still complete
 * its pull and push, not die half-way on Node's unhandled EPIPE. Any other error of the stream is still thrown.
 * Called once by src/main.ts, before a command runs.
 */
export function keepGoingWhenReaderLeaves(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE' || err.code === 'ERR_STREAM_DESTROYED') return;
      throw err;
    });
  }
}

/** Prints lines: each element is one line, cleaned by terminalSafe (so no value inside it can break it). */
export function printLines(lines: string | readonly string[], to: Stream = 'stdout'): void {
  const all = typeof lines === 'string' ? [lines] : lines;
  if (all.length) streamOf(to).write(`${all.map(terminalSafe).join('\n')}\n`);
}

/** One line on stderr (a warning, an error, progress that is not the output). */
export function printError(line: string): void {
  printLines([line], 'stderr');
}

/** A value as indented JSON on stdout (or stderr), terminal-safe. */
export function printJson(value: unknown, to: Stream = 'stdout'): void {
  streamOf(to).write(`${terminalJson(value, 2)}\n`);
}

/**
 * A message of several lines written by rostercal itself (usage text, a configuration error naming each field):
 * its own line breaks are kept, each line cleaned.
 */
export function ownLines(text: string): string[] {
  return text.split('\n');
}

/**
 * A table as lines: every cell cleaned first (so widths count what is shown), columns two spaces apart, padded
 * to the widest cell (at most `maxWidth` characters wide; a longer cell overflows its column), the last one
 * not padded.
 */
export function columns(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  maxWidth = 40,
): string[] {
  const cells = [header, ...rows].map((r) => r.map(terminalSafe));
  const widths = header.map((_, i) =>
    Math.min(maxWidth, Math.max(...cells.map((r) => [...(r[i] ?? '')].length))),
  );
  return cells.map((r) =>
    r
      .map((c, i) => (i === r.length - 1 ? c : c + ' '.repeat(Math.max(0, widths[i]! - [...c].length))))
      .join('  ')
      .trimEnd(),
  );
}
