// The "Can't make it?" parts of a landing page, and the form's CSRF protection. The form works without script
// (POST, then a redirect back to the page), so the page's CSP stays as strict as it is.
//
// CSRF: a double-submit cookie (random, HttpOnly, SameSite=Strict, set with the page) that the form repeats, and
// the browser's own word on where the post came from (Origin, Sec-Fetch-Site): a form on another site can neither
// read the value nor make the browser send the cookie with its post. No server secret is needed, so every replica
// checks a form any replica served.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Request, Response } from 'express';
import type { CalendarEvent } from '../calendar/types.ts';
import { MAX_FAMILY_REASON } from '../domain/family-absence.ts';
import type { Id } from '../domain/types.ts';
import type { AbsenceView } from '../families/absences.ts';
import { cookieOf } from '../identity/cookies.ts';
import { html, type SafeHtml } from '../util/html.ts';

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
  view: AbsenceView;
  /** Where reports and undos post (`<page URL>/absences`, `…/absences/undo`). */
  action: string;
  csrf: string;
  /** A family page names the child in each line and lets the family choose. */
  family: boolean;
  /** After a redirect back: what was just done. */
  done: 'reported' | 'withdrawn' | null;
}

const DONE: Record<'reported' | 'withdrawn', string> = {
  reported:
    'Reported. The coach sees it on the attendance sheet within a minute; you can undo it until the session starts.',
  withdrawn: 'Undone: the absence is no longer reported.',
};

export function absenceDoneHtml(a: LandingAbsences | undefined): SafeHtml {
  return html`${a?.done && html`<p class="absence-done" role="status">${DONE[a.done]}</p>`}`;
}

/** The lines of one listed session: what was reported (with undo where this link reported it), then the offer. */
export function absenceHtml(a: LandingAbsences | undefined, e: CalendarEvent, day: string): SafeHtml {
  if (!a) return html``;
  const csrf = html`<input type="hidden" name="csrf" value="${a.csrf}">`;
  const reported = (a.view.reported.get(e.sessionId) ?? []).map((r) => {
    const undo =
      r.undoable &&
      html`<form method="post" action="${`${a.action}/undo`}">${csrf}<input type="hidden" name="absence" value="${r.absenceId}"><button type="submit" aria-label="Undo: ${r.label} can make it after all">Undo</button></form>`;
    return html`<div class="reported" data-absence="${r.absenceId}"><p>Reported${a.family && html` for ${r.label}`}: <strong>${day}, ${e.title}</strong></p>${undo}</div>`;
  });
  const offers = a.view.offers.get(e.sessionId) ?? [];
  return html`${reported}${offers.length > 0 && offerHtml(a, e.sessionId, offers, csrf)}`;
}

function offerHtml(
  a: LandingAbsences,
  sessionId: Id,
  offers: { studentId: Id; label: string }[],
  csrf: SafeHtml,
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
  return html`<details class="absence"><summary>Can\u2019t make it?</summary><form method="post" action="${a.action}">${csrf}<input type="hidden" name="session" value="${sessionId}">${who}<label for="${id}-reason">Reason (optional, the coach sees it)</label><input type="text" id="${id}-reason" name="reason" maxlength="${MAX_FAMILY_REASON}" autocomplete="off"><button type="submit" class="primary">Confirm: can\u2019t make it</button></form></details>`;
}
