// What a calendar page says of a report or undo just made. The redirect after the act carries what it came to
// (`?done=<kind>&session=<id>`), but a URL outlives its moment (a reload after an undo from another tab) and can be
// typed by hand: so the page says the URL's words only where its own state, read now, agrees, and otherwise what is
// true (an outside tester: "Reported" above a fresh form, "Undone" beside a report that stands). Where that state
// cannot be read (the store out of reach), it says so instead of asserting either.
import type { Id } from '../domain/types.ts';
import type { AbsenceView, ReportedAbsence } from '../families/absences.ts';

/** What an act came to, as the redirect after it names it. */
export const DONE_WORDS = {
  reported:
    'Reported. The coach sees it on the attendance sheet within a minute; you can undo it until the session starts.',
  pending:
    'This report is already on its way to the school\u2019s system: this page shows it once it is confirmed, within a minute. There is no need to report it again.',
  unconfirmed:
    'We sent the report, but we could not confirm it: the school\u2019s system did not answer in time. This page will show it within a minute; there is no need to report it again.',
  unsettled:
    'We could not confirm your earlier report, so we are checking with the school\u2019s system whether it arrived. This page will show within a minute whether it was reported; if it was not, you can report it again then.',
  withdrawn: 'Undone: the absence is no longer reported.',
  'already-withdrawn': 'That absence was already undone: it is no longer reported.',
  'undo-unconfirmed':
    'We asked to undo it, but we could not confirm it: the school\u2019s system did not answer in time. This page will show where it stands within a minute.',
} as const;

export type Done = keyof typeof DONE_WORDS;

/** What the page may say: an act's own words where the page agrees, or what is true where it does not. */
export const BANNER_WORDS = {
  ...DONE_WORDS,
  'reported-elsewhere':
    'It is reported: it was reported from another calendar link of this child, so it can be undone from that link only, until the session starts. The coach sees it on the attendance sheet.',
  'not-reported':
    'This absence is not reported now: it may have been undone from another tab or device. The session below shows where it stands.',
  'already-withdrawn-stands':
    'That absence was already undone, so nothing was changed. The report shown below is another one, and it stands.',
  'stands-now': 'A report for this session stands now: it is shown below.',
  'unchecked-report':
    'We could not check just now whether it was reported: the calendar cannot reach its records. Reload this page in a minute to see.',
  'unchecked-undo':
    'We could not check just now whether it was undone: the calendar cannot reach its records. Reload this page in a minute to see.',
} as const;

export type Said = keyof typeof BANNER_WORDS;

/** Where the forms would be, while the store cannot be read: neither what was reported nor the offer is known. */
export const UNAVAILABLE_NOTE =
  'Reporting absences is unavailable just now, and what was reported cannot be shown; try again in a minute, or tell the coach.';

const UNDO_KINDS: ReadonlySet<Done> = new Set(['withdrawn', 'already-withdrawn', 'undo-unconfirmed']);

/** The `done` of a page's query, or null for any other word. */
export function doneOf(asked: unknown): Done | null {
  return typeof asked === 'string' && Object.hasOwn(DONE_WORDS, asked) ? (asked as Done) : null;
}

/**
 * What to say of `done` at `session` (null: above the list, of the whole page) given what the page shows now, or
 * null to say nothing (the session's block says it already). `view` null: the page could not read it.
 */
export function saidOf(done: Done | null, session: Id | null, view: AbsenceView | null): Said | null {
  if (done === null) return null;
  const undo = UNDO_KINDS.has(done);
  if (view === null) return undo ? 'unchecked-undo' : 'unchecked-report';
  if (session !== null) {
    const lines = view.reported.get(session) ?? [];
    return undo ? afterUndo(done, lines) : afterReport(done, lines);
  }
  // No session of the page to check it against (a report always names one): an undo's own words, only while
  // nothing on the page stands reported to contradict them.
  return undo && view.reported.size === 0 ? done : null;
}

/** A report's claim: "Reported" only where it stands, with an Undo here only where this link made it. */
function afterReport(done: Done, lines: ReportedAbsence[]): Said | null {
  const standing = lines.filter((l) => l.state === 'reported');
  if (standing.length) return standing.some((l) => l.undoable) ? 'reported' : 'reported-elsewhere';
  // Not confirmed yet, or being undone: the block says which; an act on its way keeps its own words.
  if (lines.some((l) => l.state === 'unconfirmed')) return done === 'reported' ? null : done;
  if (lines.length) return null;
  return 'not-reported';
}

/** An undo's claim: "Undone" only where nothing stands; an absence undone before is told so. */
function afterUndo(done: Done, lines: ReportedAbsence[]): Said | null {
  if (lines.some((l) => l.state === 'undoing')) return done === 'undo-unconfirmed' ? done : null;
  if (lines.length) return done === 'already-withdrawn' ? 'already-withdrawn-stands' : 'stands-now';
  // Nothing stands: what an unconfirmed undo asked for is what the page shows now.
  return done === 'undo-unconfirmed' ? 'withdrawn' : done;
}
