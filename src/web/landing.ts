// The page a person sees at /feeds/<token>: the calendar's name, its next events and one button per calendar
// app. Every text that came from data is HTML-escaped; the only markup not written here is the QR code's SVG,
// which the qrcode package generates from the URL alone.
import { createHash } from 'node:crypto';
import QRCode from 'qrcode';
import type { CalendarEvent } from '../calendar/types.ts';

export interface SubscribeLinks {
  https: string;
  webcal: string;
  google: string;
  outlookCom: string;
  office365: string;
}

export function subscribeLinks(feedUrl: string, name: string): SubscribeLinks {
  const webcal = feedUrl.replace(/^https?:\/\//i, 'webcal://');
  const enc = encodeURIComponent;
  return {
    https: feedUrl,
    webcal,
    // Google's add-by-URL takes the webcal form in `cid`.
    google: `https://calendar.google.com/calendar/r?cid=${enc(webcal)}`,
    outlookCom: `https://outlook.live.com/calendar/0/addfromweb?url=${enc(feedUrl)}&name=${enc(name)}`,
    office365: `https://outlook.office.com/calendar/0/addfromweb?url=${enc(feedUrl)}&name=${enc(name)}`,
  };
}

export function escapeHtml(s: string): string {
  return s.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );
}

const COPY_SCRIPT = `document.querySelectorAll('[data-copy]').forEach(function(b){b.addEventListener('click',function(){var i=document.getElementById(b.getAttribute('data-copy'));i.select();(navigator.clipboard?navigator.clipboard.writeText(i.value):Promise.reject()).then(function(){b.textContent='Copied';},function(){document.execCommand('copy');b.textContent='Copied';});});});`;
const COPY_SCRIPT_HASH = createHash('sha256').update(COPY_SCRIPT).digest('base64');

export const LANDING_CSP = [
  "default-src 'none'",
  "style-src 'unsafe-inline'",
  `script-src 'sha256-${COPY_SCRIPT_HASH}'`,
  "img-src 'self' data:",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

const qrCache = new Map<string, Promise<string>>();

/** The feed URL as an inline SVG QR code (memoised: the URL of a feed changes only on rotation). */
export function qrSvg(url: string): Promise<string> {
  let svg = qrCache.get(url);
  if (!svg) {
    if (qrCache.size > 5000) qrCache.clear();
    svg = QRCode.toString(url, { type: 'svg', margin: 1, errorCorrectionLevel: 'M' });
    qrCache.set(url, svg);
  }
  return svg;
}

function when(e: CalendarEvent, locale: string): string {
  const fmt = new Intl.DateTimeFormat(locale, {
    timeZone: e.timeZone,
    weekday: 'short',
    day: 'numeric',
    month: 'short',
    hour: '2-digit',
    minute: '2-digit',
  });
  const end = new Intl.DateTimeFormat(locale, { timeZone: e.timeZone, hour: '2-digit', minute: '2-digit' });
  return `${fmt.format(new Date(e.start))}–${end.format(new Date(e.end))}`;
}

export async function landingPage(input: {
  name: string;
  description: string;
  feedUrl: string;
  upcoming: CalendarEvent[];
  eventCount: number;
  locale?: string;
}): Promise<string> {
  const links = subscribeLinks(input.feedUrl, input.name);
  const locale = input.locale ?? 'en-GB';
  const qr = await qrSvg(input.feedUrl);
  const h = escapeHtml;
  const events = input.upcoming.length
    ? `<ul class="events">${input.upcoming
        .map(
          (e) =>
            `<li class="${e.status}"><span class="when">${h(when(e, locale))}</span> <span class="what">${h(e.title)}</span>${
              e.location ? ` <span class="where">${h(e.location.name)}</span>` : ''
            }</li>`,
        )
        .join('')}</ul>`
    : '<p>No upcoming events yet.</p>';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex, nofollow">
<link rel="icon" href="data:,">
<title>${h(input.name)}</title>
<style>
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;background:#f5f6f8;color:#1d2330}
main{max-width:42rem;margin:0 auto;padding:1.5rem 1rem 3rem}
h1{font-size:1.5rem;margin:.2rem 0 .4rem}
p.lead{color:#4b5563;margin:0 0 1.2rem}
section{background:#fff;border-radius:12px;padding:1rem 1.2rem;margin:0 0 1rem;box-shadow:0 1px 3px rgba(0,0,0,.08)}
h2{font-size:1.05rem;margin:0 0 .7rem}
.buttons{display:flex;flex-wrap:wrap;gap:.5rem}
.buttons a{display:inline-block;padding:.6rem .9rem;border-radius:8px;background:#1f5fbf;color:#fff;text-decoration:none;font-weight:600}
.buttons a.google{background:#188038}.buttons a.outlook{background:#0f6cbd}
.copy{display:flex;gap:.5rem}.copy input{flex:1;min-width:0;padding:.5rem;font:inherit;font-size:.85rem;border:1px solid #cbd2dc;border-radius:6px}
.copy button{padding:.5rem .8rem;border-radius:6px;border:1px solid #1f5fbf;background:#fff;color:#1f5fbf;font-weight:600;cursor:pointer}
.qr{display:flex;gap:1rem;align-items:center}.qr svg{width:160px;height:160px;flex:none}
ul.events{list-style:none;margin:0;padding:0}ul.events li{padding:.45rem 0;border-bottom:1px solid #eef0f3}
.when{color:#4b5563;font-variant-numeric:tabular-nums}.what{font-weight:600}.where{color:#6b7280}
li.cancelled .what{text-decoration:line-through}
small{color:#6b7280}
</style>
</head>
<body>
<main>
<h1>${h(input.name)}</h1>
<p class="lead">${h(input.description)} Subscribe once and your calendar app keeps it up to date.</p>
<section>
<h2>Add to your calendar</h2>
<div class="buttons">
<a class="apple" href="${h(links.webcal)}" data-kind="webcal">Apple Calendar / Outlook desktop</a>
<a class="google" href="${h(links.google)}" data-kind="google" rel="noreferrer noopener" target="_blank">Google Calendar</a>
<a class="outlook" href="${h(links.outlookCom)}" data-kind="outlook-com" rel="noreferrer noopener" target="_blank">Outlook.com</a>
<a class="outlook" href="${h(links.office365)}" data-kind="office365" rel="noreferrer noopener" target="_blank">Microsoft 365</a>
</div>
</section>
<section>
<h2>Or copy the address</h2>
<div class="copy"><input id="feed-url" readonly value="${h(links.https)}" aria-label="Calendar address"><button type="button" data-copy="feed-url">Copy</button></div>
<p><small>Anyone with this address can see this calendar. Keep it among the family.</small></p>
</section>
<section class="qr">
${qr}
<p>Scan with your phone's camera to subscribe there.</p>
</section>
<section>
<h2>Coming up</h2>
${events}
<p><small>${input.eventCount} event${input.eventCount === 1 ? '' : 's'} in this calendar.</small></p>
</section>
</main>
<script>${COPY_SCRIPT}</script>
</body>
</html>
`;
}
