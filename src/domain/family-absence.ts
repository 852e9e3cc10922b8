// How an absence a family reported through a calendar page is marked upstream. The spec's absence record has no
// source field and POST /pre-explained-absences no idempotency key, so the mark lives in `reason`, the one free
// text the record carries: a fixed prefix and the reporting link's id (the first characters of its token's hash,
// never the token). It tells rostercal which absences it wrote and for which link (only those can be undone, only
// from that link), and tells the school's staff, wherever they read the reason, that the family reported it.
import type { PreExplainedAbsence } from './types.ts';

const PREFIX = 'Reported by the family on the calendar page';
const MARK = /^Reported by the family on the calendar page \[rostercal ([0-9a-f]{12})\](?:: ([\s\S]*))?$/;

/** Characters of a link's token hash that name it in absences and the audit log. */
export const LINK_ID_LENGTH = 12;

/** The most of a family's own words kept (the spec truncates the whole reason at 4096). */
export const MAX_FAMILY_REASON = 200;

export function linkIdOf(tokenHash: string): string {
  return tokenHash.slice(0, LINK_ID_LENGTH);
}

/** The reason written upstream: the mark, then the family's words (control characters dropped, capped). */
export function familyReason(linkId: string, words: string): string {
  if (!/^[0-9a-f]{12}$/.test(linkId)) throw new TypeError('linkId must be 12 hexadecimal characters');
  const said = cleanWords(words);
  return `${PREFIX} [rostercal ${linkId}]${said ? `: ${said}` : ''}`;
}

/** What the family typed, as it may be sent: one line, no control or bidi characters, at most MAX_FAMILY_REASON. */
export function cleanWords(words: string): string {
  return [
    ...words
      .replace(/[\p{Cc}\p{Cf}\u2028\u2029]+/gu, ' ')
      .replace(/\s+/g, ' ')
      .trim(),
  ]
    .slice(0, MAX_FAMILY_REASON)
    .join('')
    .trim();
}

/** The reporting link and the family's words of an absence rostercal wrote; null for any other absence. */
export function familyReportOf(
  a: Pick<PreExplainedAbsence, 'reason'>,
): { linkId: string; words: string } | null {
  const m = MARK.exec(a.reason);
  return m ? { linkId: m[1]!, words: (m[2] ?? '').trim() } : null;
}
