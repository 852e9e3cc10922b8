// The "Can't make it?" parts of a landing page, and the form's CSRF protection. The form works without script
// (POST, then a redirect back to the page), so the page's CSP stays as strict as it is.
//
// CSRF: a double-submit cookie (random, HttpOnly, SameSite=Strict, set with the page) that the form repeats, and
// the browser's own word on where the post came from (Origin, Sec-Fetch-Site): a form on another site can neither
// read the value nor make the browser send the cookie with its post. No server secret is needed, so every replica
// checks a form any replica served.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Request, Response } from 'express';
import { sessionDay, sessionTimeRange } from '../calendar/times.ts';
import type { CalendarEvent } from '../calendar/types.ts';
import { MAX_FAMILY_REASON } from '../domain/family-absence.ts';
import type { Id } from '../domain/types.ts';
import type { Offer } from '../families/absence-view.ts';
import type { AbsenceView } from '../families/absences.ts';
import { cookieOf } from '../identity/cookies.ts';
import { html, type SafeHtml } from '../util/html.ts';
import { BANNER_WORDS, type Said, UNAVAILABLE_NOTE } from './absence-done.ts';

const COOKIE = 'rostercal_form';
const VALUE_RE = /^[A-Za-z0-9_-]{32}$/;

function formCookie(req: Request): string | null {
  const v = cookieOf(req, COOKIE);
  return v && VALUE_RE.test(v) ? v : null;
}

/** The value the page's forms repeat: the browser's cookie, or a new one set with this response. */
export function formToken(req: Request, res: Response, secure: boolean): string {
  const have = formCookie(req);
  if (have) return have;
  const value = randomBytes(24).toString('base64url');
  res.append(
    'Set-Cookie',
    `${COOKIE}=${value}; Path=/; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`,
  );
  return value;
}

/**
 * Why a posted form is refused as a cross-site request, or null: the cookie and the field must match, and a
 * browser that names the post's origin must name this service's.
 */
export function crossSiteProblem(req: Request, publicUrl: string, field: unknown): string | null {
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return `Sec-Fetch-Site ${site}`;
  const origin = req.headers.origin;
  // "null": the page's no-referrer policy makes browsers send that for its own forms.
  if (origin !== undefined && origin !== 'null' && origin !== new URL(publicUrl).origin)
    return 'another origin';
  const cookie = formCookie(req);
  if (!cookie) return 'no form cookie';
  if (typeof field !== 'string' || field.length !== cookie.length) return 'form token missing';
  return timingSafeEqual(Buffer.from(field), Buffer.from(cookie)) ? null : 'form token mismatch';
}

/** What the landing page needs to offer "Can't make it?" and show what was reported. */
export interface LandingAbsences {
  /** Null: it could not be read just now (the store out of reach); the page says so where the forms would be. */
  view: AbsenceView | null;
  /** With no view: the sessions whose block says reporting is unavailable just now (those a form would be on). */
  noteAt?: ReadonlySet<Id>;
  /** Where reports and undos post (`<page URL>/absences`, `…/absences/undo`). */
  action: string;
  csrf: string;
  /** A family page names the child in each line and lets the family choose. */
  family: boolean;
  /** After a redirect back: what to say of what was done, as the page stands now (absence-done.ts). */
  said: Said | null;
  /** The listed session it was done for: said in its block, where the page lands (else above the list). */
  doneSession?: Id | null;
  /** The page's events by session, to name a session another one's report covers (their family-visible text). */
  events: ReadonlyMap<Id, CalendarEvent>;
}

/** What was just done, above the list: unless it is said in its session's block (absenceHtml). */
export function absenceDoneHtml(a: LandingAbsences | undefined): SafeHtml {
  return html`${a?.said && (a.doneSession ?? null) === null && doneLine(a.said)}`;
}

function doneLine(said: Said): SafeHtml {
  return html`<p class="absence-done" role="status">${BANNER_WORDS[said]}</p>`;
}

/** "Rowing, Tue 4:00–5:30 pm": a session of the page named in its own (family-visible) words. */
function named(a: LandingAbsences, sessionId: Id, locale: string): string {
  const e = a.events.get(sessionId);
  if (!e) return 'another session at the same time';
  return `${e.title}, ${sessionDay(e.start, e.timeZone, locale, 'short')} ${sessionTimeRange(e.start, e.end, e.timeZone, locale)}`;
}

/** The lines of one listed session: what was reported (with undo where this link reported it), then the offer. */
export function absenceHtml(
  a: LandingAbsences | undefined,
  e: CalendarEvent,
  day: string,
  locale = 'en-GB',
): SafeHtml {
  if (!a) return html``;
  const done = a.said !== null && a.doneSession === e.sessionId && doneLine(a.said);
  if (!a.view)
    return html`${done}${a.noteAt?.has(e.sessionId) && html`<p class="absence-unavailable" role="status">${UNAVAILABLE_NOTE}</p>`}`;
  const view = a.view;
  const csrf = html`<input type="hidden" name="csrf" value="${a.csrf}">`;
  const reported = (view.reported.get(e.sessionId) ?? []).map((r) => {
    const who = a.family && html` for ${r.label}`;
    const covered =
      r.forSession !== null &&
      html` (covered by the absence reported for <strong>${named(a, r.forSession, locale)}</strong>, at the same time)`;
    if (r.state !== 'reported')
      return html`<div class="reported pending"><p>${
        r.state === 'undoing' ? html`Being undone${who}` : html`Report not confirmed yet${who}`
      }: <strong>${day}, ${e.title}</strong>${covered}. We could not confirm it yet with the school\u2019s system: this page will show where it stands within a minute.</p></div>`;
    const undo =
      r.undoable &&
      r.absenceId !== null &&
      html`<form method="post" action="${`${a.action}/undo`}">${csrf}<input type="hidden" name="absence" value="${r.absenceId}"><button type="submit" aria-label="Undo: ${r.label} can make it after all">Undo</button></form>`;
    return html`<div class="reported" data-absence="${r.absenceId ?? ''}"><p>Reported${who}: <strong>${day}, ${e.title}</strong>${covered}</p>${undo}</div>`;
  });
  const offers = view.offers.get(e.sessionId) ?? [];
  return html`${done}${reported}${offers.length > 0 && offerHtml(a, e.sessionId, offers, csrf, locale)}`;
}

/** Before confirming: the other sessions the report covers (an absence is the session's time, not the session). */
function coversHtml(a: LandingAbsences, offers: Offer[], locale: string): SafeHtml {
  const lines = offers.filter((o) => o.alsoCovers.length > 0);
  if (lines.length === 0) return html``;
  return html`${lines.map(
    (o) =>
      html`<p class="covers">${a.family ? html`${o.label}: this` : 'This'} also reports ${
        o.alsoCovers.length === 1 ? 'the session' : 'the sessions'
      } at the same time: ${o.alsoCovers.map(
        (id, i) => html`${i > 0 ? ', ' : ''}<strong>${named(a, id, locale)}</strong>`,
      )}. The coach of each sees it.</p>`,
  )}`;
}

function offerHtml(
  a: LandingAbsences,
  sessionId: Id,
  offers: Offer[],
  csrf: SafeHtml,
  locale: string,
): SafeHtml {
  const id = `absence-${sessionId}`;
  const who =
    a.family && offers.length > 1
      ? html`<fieldset><legend>Who can\u2019t make it?</legend>${offers.map(
          (c) =>
            html`<label class="choice"><input type="radio" name="student" value="${c.studentId}" required> ${c.label}</label>`,
        )}</fieldset>`
      : html`<input type="hidden" name="student" value="${offers[0]!.studentId}">${
          a.family && html`<p>For <strong>${offers[0]!.label}</strong></p>`
        }`;
  return html`<details class="absence"><summary>Can\u2019t make it?</summary><form method="post" action="${a.action}">${csrf}<input type="hidden" name="session" value="${sessionId}">${who}${coversHtml(a, offers, locale)}<label for="${id}-reason">Reason (optional, the coach sees it)</label><input type="text" id="${id}-reason" name="reason" maxlength="${MAX_FAMILY_REASON}" autocomplete="off"><button type="submit" class="primary">Confirm: can\u2019t make it</button></form></details>`;
}
