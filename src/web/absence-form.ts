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
import { escapeHtml } from './html-escape.ts';

const COOKIE = 'rostercal_form';
const VALUE_RE = /^[A-Za-z0-9_-]{32}$/;

function cookieOf(req: Request): string | null {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [name, ...rest] = part.trim().split('=');
    if (name === COOKIE) {
      const v = rest.join('=');
      return VALUE_RE.test(v) ? v : null;
    }
  }
  return null;
}

/** The value the page's forms repeat: the browser's cookie, or a new one set with this response. */
export function formToken(req: Request, res: Response, secure: boolean): string {
  const have = cookieOf(req);
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
  const cookie = cookieOf(req);
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

export const ABSENCE_CSS = `.absence{margin:.45rem 0 .1rem}
.absence summary{display:inline-flex;align-items:center;min-height:44px;padding:.3rem .8rem;border-radius:8px;border:2px solid #9a3412;color:#9a3412;font-weight:600;cursor:pointer;list-style:none}
.absence summary::-webkit-details-marker{display:none}
.absence form{display:grid;gap:.45rem;margin:.5rem 0 0;padding:.6rem;background:#fff;border:1px solid #e5e7eb;border-radius:8px}
.absence fieldset{border:0;margin:0;padding:0;display:grid;gap:.2rem}
.absence legend{font-weight:600;padding:0;margin-bottom:.2rem}
.absence .choice{display:flex;align-items:center;gap:.5rem;min-height:44px}
.absence .choice input{width:22px;height:22px}
.absence input[type=text]{min-height:44px;padding:.4rem .5rem;border:1px solid #9aa4b2;border-radius:8px;width:100%}
.absence button.primary{background:#9a3412;border-color:#9a3412;color:#fff}
.reported{display:flex;flex-wrap:wrap;align-items:center;gap:.4rem;margin:.45rem 0 .1rem;padding:.35rem .6rem;background:#fff7ed;border-left:4px solid #9a3412;border-radius:0 8px 8px 0}
.reported p{margin:0;flex:1;min-width:12rem}
.reported form{margin:0}
p.absence-done{background:#f0fdf4;border-left:4px solid #166534;border-radius:0 8px 8px 0;padding:.5rem .7rem}`;

const DONE: Record<'reported' | 'withdrawn', string> = {
  reported:
    'Reported. The coach sees it on the attendance sheet within a minute; you can undo it until the session starts.',
  withdrawn: 'Undone: the absence is no longer reported.',
};

export function absenceDoneHtml(a: LandingAbsences | undefined): string {
  return a?.done ? `<p class="absence-done" role="status">${escapeHtml(DONE[a.done])}</p>` : '';
}

/** The lines of one listed session: what was reported (with undo where this link reported it), then the offer. */
export function absenceHtml(a: LandingAbsences | undefined, e: CalendarEvent, day: string): string {
  if (!a) return '';
  const h = escapeHtml;
  const csrf = `<input type="hidden" name="csrf" value="${h(a.csrf)}">`;
  const out: string[] = [];
  for (const r of a.view.reported.get(e.sessionId) ?? []) {
    const who = a.family ? ` for ${h(r.label)}` : '';
    const undo = r.undoable
      ? `<form method="post" action="${h(`${a.action}/undo`)}">${csrf}<input type="hidden" name="absence" value="${r.absenceId}"><button type="submit" aria-label="Undo: ${h(r.label)} can make it after all">Undo</button></form>`
      : '';
    out.push(
      `<div class="reported" data-absence="${r.absenceId}"><p>Reported${who}: <strong>${h(day)}, ${h(e.title)}</strong></p>${undo}</div>`,
    );
  }
  const offers = a.view.offers.get(e.sessionId) ?? [];
  if (offers.length) out.push(offerHtml(a, e.sessionId, offers, csrf));
  return out.join('');
}

function offerHtml(
  a: LandingAbsences,
  sessionId: Id,
  offers: { studentId: Id; label: string }[],
  csrf: string,
): string {
  const h = escapeHtml;
  const id = `absence-${sessionId}`;
  const who =
    a.family && offers.length > 1
      ? `<fieldset><legend>Who can\u2019t make it?</legend>${offers
          .map(
            (c) =>
              `<label class="choice"><input type="radio" name="student" value="${c.studentId}" required> ${h(c.label)}</label>`,
          )
          .join('')}</fieldset>`
      : `<input type="hidden" name="student" value="${offers[0]!.studentId}">${
          a.family ? `<p>For <strong>${h(offers[0]!.label)}</strong></p>` : ''
        }`;
  return `<details class="absence"><summary>Can\u2019t make it?</summary><form method="post" action="${h(a.action)}">${csrf}<input type="hidden" name="session" value="${sessionId}">${who}<label for="${id}-reason">Reason (optional, the coach sees it)</label><input type="text" id="${id}-reason" name="reason" maxlength="${MAX_FAMILY_REASON}" autocomplete="off"><button type="submit" class="primary">Confirm: can\u2019t make it</button></form></details>`;
}
