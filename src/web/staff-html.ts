// The staff pages' shell: mobile first (no horizontal scrolling at 390 px, tap targets of at least 44 px), one
// stylesheet allowed by hash in the CSP, forms posting only to this origin.
import { createHash } from 'node:crypto';
import type { Response } from 'express';

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const STYLE = `*{box-sizing:border-box}html{-webkit-text-size-adjust:100%}
body{font:16px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;background:#f4f5f7;color:#1c1e21;overflow-wrap:anywhere}
header{display:flex;flex-wrap:wrap;align-items:center;gap:.5rem;justify-content:space-between;padding:.5rem 1rem;background:#1f3a5f;color:#fff}
header a,header button{color:#fff}header .who{font-size:.9rem;opacity:.9}
header nav{display:flex;flex-wrap:wrap}header nav a{display:inline-flex;align-items:center;min-height:44px;min-width:44px;padding:0 .5rem}
main{max-width:52rem;margin:0 auto;padding:1rem}
h1{font-size:1.35rem;margin:.5rem 0 1rem}h2{font-size:1.15rem;margin:0 0 .25rem}h2.group{margin:1.4rem 0 .6rem}h3{font-size:1rem;margin:1rem 0 .5rem}
.card{background:#fff;border-radius:10px;box-shadow:0 1px 3px #0002;padding:1rem;margin:0 0 1rem}
.muted{color:#5f6670;font-size:.9rem}.warn{color:#8a1c1c}
a.btn,button,.btn{display:inline-flex;align-items:center;justify-content:center;min-height:44px;min-width:44px;padding:.5rem .9rem;border-radius:8px;border:1px solid #1f3a5f;background:#fff;color:#1f3a5f;font:inherit;text-decoration:none;cursor:pointer;text-align:center}
a.btn.primary,button.primary{background:#1f3a5f;color:#fff}
header button{background:transparent;border-color:#fff8}
.actions{display:flex;flex-wrap:wrap;gap:.5rem;margin:.5rem 0}
ul.sessions{list-style:none;padding:0;margin:.5rem 0}ul.sessions li{padding:.5rem 0;border-top:1px solid #e3e5e8}
.tag{display:inline-block;font-size:.8rem;padding:0 .4rem;border-radius:4px;background:#eef1f5;margin-left:.25rem}
.cancelled{text-decoration:line-through;color:#8a1c1c}
input[type=search],input[type=text],input[type=password],select,textarea{width:100%;min-height:44px;font:inherit;padding:.5rem;border:1px solid #b8bec6;border-radius:8px}
form.inline{display:inline}
.scroll{overflow-x:auto}table{border-collapse:collapse;width:100%;font-size:.9rem;overflow-wrap:normal}th,td{text-align:left;padding:.4rem .5rem;border-top:1px solid #e3e5e8;vertical-align:top;overflow-wrap:break-word}
label{display:block;margin:.5rem 0 .25rem}
main.wide{max-width:84rem}td .actions{margin:0}tr.failed td{color:#8a1c1c}tr.suspicious td,tr.interrupted td{color:#7a4b00}
details.card>summary,.card details>summary,details.group>summary{min-height:44px;display:flex;align-items:center;cursor:pointer;font-weight:600}
details.group>summary h2{margin:0}section.card>h3{font-size:1.1rem;margin:0 0 .25rem}
.card details>summary::before,details.group>summary::before{content:"▸";margin-right:.5rem}.card details[open]>summary::before,details.group[open]>summary::before{content:"▾"}
.nowrap{white-space:nowrap}code{overflow-wrap:anywhere}
@media (max-width:44rem){table.stack,table.stack tbody,table.stack tr,table.stack td{display:block;width:100%}
table.stack thead{display:none}table.stack tr{border-top:1px solid #e3e5e8;padding:.5rem 0}table.stack td{border:0;padding:.15rem 0}
table.stack td[data-label]::before{content:attr(data-label) ": ";color:#5f6670}table.stack td:empty{display:none}}`;

const STYLE_HASH = createHash('sha256').update(STYLE).digest('base64');
export const STAFF_CSP = `default-src 'none'; style-src 'sha256-${STYLE_HASH}'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`;

/** The admins' pages, in the header of each. */
export const ADMIN_NAV = [
  { href: '/staff', label: 'My teams' },
  { href: '/admin', label: 'Admin' },
  { href: '/admin/audit', label: 'Audit' },
  { href: '/admin/sessions', label: 'Sessions' },
];

export interface PageOptions {
  title: string;
  /** Already-escaped HTML of the page body (inside <main>). */
  body: string;
  /** Shown in the header with a sign-out button when given. */
  who?: { label: string; csrf: string | null } | null;
  status?: number;
  nav?: { href: string; label: string }[];
  /** Wide tables (the admin pages): main grows to 84rem on a desktop; phones are unchanged. */
  wide?: boolean;
}

export function sendPage(res: Response, opts: PageOptions): void {
  const nav = (opts.nav ?? [])
    .map((n) => `<a href="${escapeHtml(n.href)}">${escapeHtml(n.label)}</a>`)
    .join(' ');
  const who = opts.who
    ? `<span class="who">${escapeHtml(opts.who.label)}</span>${
        opts.who.csrf !== null
          ? `<form class="inline" method="post" action="/auth/logout"><input type="hidden" name="csrf" value="${escapeHtml(opts.who.csrf)}"><button type="submit">Sign out</button></form>`
          : ''
      }`
    : '';
  res.status(opts.status ?? 200);
  res.set({ 'Cache-Control': 'no-store', 'Content-Security-Policy': STAFF_CSP });
  res.type('html').send(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(opts.title)} · rostercal</title><style>${STYLE}</style></head>
<body><header><strong>rostercal</strong><nav>${nav}</nav><div class="actions">${who}</div></header>
<main${opts.wide ? ' class="wide"' : ''}>${opts.body}</main></body></html>`);
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
    body: `<div class="card" role="alert"><h1>${escapeHtml(title)}</h1>${paragraphs.map((p) => `<p>${escapeHtml(p)}</p>`).join('')}${
      link
        ? `<p><a class="btn primary" href="${escapeHtml(link.href)}">${escapeHtml(link.label)}</a></p>`
        : ''
    }</div>`,
  });
}
