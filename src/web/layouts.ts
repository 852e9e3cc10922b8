// One layout per audience, each with its CSP: parents (calendar pages and what they lead to: no sign-in, a
// capability in the URL), staff (/staff and signing in) and admins (/admin: staff's shell with the admin pages'
// navigation and room for wide tables). Every page is written with html`…` (util/html.ts) and allows, by hash,
// only the stylesheets and script it carries (assets.ts).
import type { Response } from 'express';
import { escapeForTerminal } from '../terminal.ts';
import { html, join, type SafeHtml, trustedMarkup } from '../util/html.ts';
import { ASSETS, type PageAsset } from './assets.ts';

const { landingScript, landingStyle, absenceStyle, noticeStyle, staffStyle } = ASSETS;

// Our own files, checked for end tags when they were read (assets.ts): the only markup here not built by html`…`.
const TRUSTED = new Map<PageAsset, SafeHtml>(Object.values(ASSETS).map((a) => [a, trustedMarkup(a.text)]));

function trusted(asset: PageAsset): SafeHtml {
  const markup = TRUSTED.get(asset);
  if (!markup) throw new Error('a page asset not read by assets.ts');
  return markup;
}

function styleTags(styles: readonly PageAsset[]): SafeHtml {
  return html`${styles.map((s) => html`<style>${trusted(s)}</style>`)}`;
}

// ---- parents -------------------------------------------------------------------------------------------------

/** The calendar pages (a feed's, a family link's): their script, the QR scanner's camera and the forms they post. */
export const LANDING_CSP = [
  "default-src 'none'",
  `style-src ${landingStyle.source} ${absenceStyle.source}`,
  // 'self': the QR decoder (jsQR), fetched only where the browser has no BarcodeDetector for QR codes.
  `script-src 'self' ${landingScript.source}`,
  "img-src 'self' data:",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  // The reminder choice (GET, same page), the family-link form (POST /family) and "Can't make it?" (POST).
  "form-action 'self'",
  // The camera preview of the QR scanner.
  "media-src 'self' blob: mediastream:",
].join('; ');

/** Landing pages may use the camera themselves (the QR scanner); no one else, and nothing else. */
export const LANDING_PERMISSIONS = 'camera=(self), microphone=(), geolocation=(), interest-cohort=()';

/** The pages that only say something (a link that does not work, a form that did not go through): no script, no form. */
export const NOTICE_CSP = `default-src 'none'; style-src ${noticeStyle.source}; img-src data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'`;

export interface ParentPage {
  title: string;
  body: SafeHtml;
  /** A calendar page: its stylesheet and script (and "Can't make it?"'s styles where it offers it); else a notice. */
  landing?: { absences: boolean };
}

export function parentLayout(page: ParentPage): string {
  const styles = page.landing
    ? [landingStyle, ...(page.landing.absences ? [absenceStyle] : [])]
    : [noticeStyle];
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex, nofollow">
<link rel="icon" href="data:,">
<title>${page.title}</title>
${styleTags(styles)}
</head>
<body>
<main>
${page.body}
</main>
${page.landing ? html`<script>${trusted(landingScript)}</script>` : ''}
</body>
</html>
`.toString();
}

/** A parent's notice page, sent: its status, its CSP, never cached. */
/** `formTo`: the origin a form on the notice posts to (a failed report's form, sent again); else no form acts. */
export function sendNotice(
  res: Response,
  status: number,
  title: string,
  body: SafeHtml,
  formTo?: string,
): void {
  res.status(status);
  res.setHeader('Content-Type', 'text/html; charset=utf-8');
  res.setHeader(
    'Content-Security-Policy',
    formTo ? NOTICE_CSP.replace("form-action 'none'", `form-action 'self' ${formTo}`) : NOTICE_CSP,
  );
  res.setHeader('Cache-Control', 'no-store');
  res.end(parentLayout({ title, body }));
}

// ---- staff and admins ----------------------------------------------------------------------------------------

/** The staff pages' CSP; formTargets are origins besides this one that a form on the page may lead to. */
function staffCsp(formTargets: readonly string[], scripts: readonly PageAsset[] = []): string {
  for (const origin of formTargets)
    if (new URL(origin).origin !== origin) throw new Error(`a form target must be an origin: ${origin}`);
  const formAction = ["'self'", ...formTargets].join(' ');
  const scriptSrc = scripts.length ? `; script-src ${scripts.map((s) => s.source).join(' ')}` : '';
  return `default-src 'none'; style-src ${staffStyle.source}${scriptSrc}; img-src 'self' data:; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`;
}

/** The admins' pages, in the header of each. */
export const ADMIN_NAV = [
  { href: '/staff', label: 'My teams' },
  { href: '/admin', label: 'Admin' },
  { href: '/admin/audit', label: 'Audit' },
  { href: '/admin/sessions', label: 'Sessions' },
];

export interface StaffPage {
  title: string;
  body: SafeHtml;
  /** Shown in the header with a sign-out button when given. */
  who?: { label: string; csrf: string | null } | null;
  status?: number;
  /**
   * Origins besides this one that a form may lead to: Chromium applies form-action to the redirects after a
   * post too (the demo's sign-in, on a provider of its own in the tests, redirects to rostercal's callback).
   */
  formTargets?: readonly string[];
  /** Scripts the page carries (assets.ts), each allowed by its hash; the page works without them. */
  scripts?: readonly PageAsset[];
}

export interface AdminPage extends StaffPage {
  /** Wide tables (audit, sessions, jobs): main grows to 84rem on a desktop; phones are unchanged. */
  wide?: boolean;
}

function staffShell(page: StaffPage, nav: readonly { href: string; label: string }[], wide: boolean): string {
  const who = page.who
    ? html`<span class="who">${page.who.label}</span>${
        page.who.csrf !== null &&
        html`<form class="inline" method="post" action="/auth/logout"><input type="hidden" name="csrf" value="${page.who.csrf}"><button type="submit">Sign out</button></form>`
      }`
    : '';
  const links = nav.map((n) => html`<a href="${n.href}">${n.label}</a>`);
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${page.title} · rostercal</title>${styleTags([staffStyle])}</head>
<body><header><strong>rostercal</strong><nav>${join(links, ' ')}</nav><div class="actions">${who}</div></header>
<main${wide ? html` class="wide"` : ''}>${page.body}</main>${(page.scripts ?? []).map((s) => html`<script>${trusted(s)}</script>`)}</body></html>`.toString();
}

function send(res: Response, status: number | undefined, page: { text: string; csp: string }): void {
  res.status(status ?? 200);
  res.set({ 'Cache-Control': 'no-store', 'Content-Security-Policy': page.csp });
  res.type('html').send(page.text);
}

function staffPage(page: StaffPage, nav: readonly { href: string; label: string }[], wide: boolean) {
  return { text: staffShell(page, nav, wide), csp: staffCsp(page.formTargets ?? [], page.scripts) };
}

/** A staff page as text, with the CSP that allows it: for a sender that is not Express (the demo's provider). */
export function staffPageText(page: StaffPage): { text: string; csp: string } {
  return staffPage(page, [], false);
}

/** Signed-in staff pages: the way back to My teams at the top (a session's roster is a long page on a phone). */
const STAFF_NAV = [{ href: '/staff', label: 'My teams' }];

/** A staff page (/staff, a session, signing in and out): My teams in the header once someone is signed in. */
export function sendPage(res: Response, page: StaffPage): void {
  send(res, page.status, staffPage(page, page.who ? STAFF_NAV : [], false));
}

/** An admin page (/admin…): the admin pages' navigation in the header. */
export function sendAdminPage(res: Response, page: AdminPage): void {
  send(res, page.status, staffPage(page, ADMIN_NAV, page.wide === true));
}

/** A page that explains why something cannot be done and whom to ask. */
export function sendProblem(
  res: Response,
  status: number,
  title: string,
  paragraphs: string[],
  link?: { href: string; label: string },
): void {
  sendPage(res, {
    title,
    status,
    body: html`<div class="card" role="alert"><h1>${title}</h1>${paragraphs.map((p) => html`<p>${p}</p>`)}${
      link && html`<p><a class="btn primary" href="${link.href}">${link.label}</a></p>`
    }</div>`,
  });
}

/**
 * A JSON answer (JSON.stringify's text) with what JSON leaves raw of the controls and bidi overrides escaped
 * (util/controls.ts): the same value, but upstream text in it cannot act on the terminal of whoever reads it.
 */
export function sendJson(res: Response, json: string): void {
  res.type('application/json').send(escapeForTerminal(json));
}
