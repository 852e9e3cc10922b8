// The page a person opens at /feeds/<token> (or a family link): what is coming up, how fresh it is, and the
// subscribe button that suits their device first, the others below. Every text that came from data is
// HTML-escaped and comes from the projection (calendar/) as the feed carries it; the only markup not written
// here is the QR code's SVG, which the qrcode package generates from the page's URL alone.
import { createHash } from 'node:crypto';
import QRCode from 'qrcode';
import { sessionDate, sessionDay, sessionTimeRange } from '../calendar/times.ts';
import type { CalendarEvent } from '../calendar/types.ts';
import { REMINDER_KEYS, REMINDERS, type ReminderKey } from '../feeds/reminders.ts';
import type { FeedScope } from '../store/types.ts';
import { ABSENCE_CSS, absenceDoneHtml, absenceHtml, type LandingAbsences } from './absence-form.ts';
import type { Device } from './device.ts';
import { eventFileUrl } from './event-download.ts';
import { ago } from './freshness.ts';
import { escapeHtml } from './html-escape.ts';

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

/** Adds a calendar that Google keeps (our push) to the visitor's Google account: changes show within minutes. */
export function liveGoogleLink(calendarId: string): string {
  return `https://calendar.google.com/calendar/render?cid=${encodeURIComponent(calendarId)}`;
}

export { escapeHtml };

// Copy buttons; the reminder choice applies itself as soon as it changes (the Apply button stays for pages
// without scripts). The family section's scanner reads another child's QR code, from the camera or from a photo,
// and adds the link it holds to the list: with the browser's own BarcodeDetector where it reads QR codes (Chrome
// on Android, Safari on recent iPhones), otherwise with jsQR (served from our own origin, loaded only when needed).
const SCRIPT = `document.querySelectorAll('[data-copy]').forEach(function(b){b.addEventListener('click',function(){var i=document.getElementById(b.getAttribute('data-copy'));i.select();(navigator.clipboard?navigator.clipboard.writeText(i.value):Promise.reject()).then(function(){b.textContent='Copied';},function(){document.execCommand('copy');b.textContent='Copied';});});});var r=document.getElementById('reminder');if(r){r.addEventListener('change',function(){r.form.submit();});}
var fam=document.getElementById('family-links');if(fam){(function(){
var st=document.getElementById('scan-status'),cam=document.getElementById('scan-camera'),photo=document.getElementById('scan-photo'),video=document.getElementById('scan-video'),stream=null,lib=null;
function say(m){st.textContent=m;}
function add(text){var u=String(text||'').trim();if(!/^https?:[/][/][^\\s]+[/](feeds|family)[/][A-Za-z0-9_-]{20,}[^\\s]*$/.test(u)){say('That QR code is not a calendar link from a child\\'s page.');return;}
var lines=fam.value.split(/\\n/).map(function(l){return l.trim();}).filter(Boolean);if(lines.indexOf(u)<0)lines.push(u);fam.value=lines.join('\\n');say('Link added. Scan another, or make the family link.');}
function jsqr(){if(!lib)lib=new Promise(function(ok,no){var el=document.createElement('script');el.src=fam.getAttribute('data-decoder');el.onload=function(){ok(window.jsQR);};el.onerror=function(){lib=null;no(new Error('the QR decoder did not load'));};document.head.appendChild(el);});return lib;}
function viaJsqr(src,w,h){return jsqr().then(function(read){var k=Math.min(1,1280/Math.max(w,h)),c=document.createElement('canvas');c.width=Math.max(1,Math.round(w*k));c.height=Math.max(1,Math.round(h*k));var x=c.getContext('2d',{willReadFrequently:true});x.drawImage(src,0,0,c.width,c.height);var d=x.getImageData(0,0,c.width,c.height),q=read(d.data,c.width,c.height);return q?q.data:null;});}
var native=('BarcodeDetector' in window)?window.BarcodeDetector.getSupportedFormats().then(function(f){return f.indexOf('qr_code')>=0?new window.BarcodeDetector({formats:['qr_code']}):null;}).catch(function(){return null;}):Promise.resolve(null);
function decode(src,w,h){return native.then(function(d){return d?d.detect(src).then(function(c){return c.length?c[0].rawValue:null;}):viaJsqr(src,w,h);});}
function stop(){if(stream){stream.getTracks().forEach(function(t){t.stop();});stream=null;}video.hidden=true;cam.textContent='Scan a QR code';}
photo.parentNode.hidden=false;
photo.addEventListener('change',function(){var f=photo.files&&photo.files[0];if(!f)return;say('Reading the photo\\u2026');createImageBitmap(f).then(function(b){return decode(b,b.width,b.height);}).then(function(t){if(t===null)say('No QR code found in that photo: try again, closer and in focus.');else add(t);},function(e){say('Could not read that photo ('+e.message+').');}).then(function(){photo.value='';});});
if(navigator.mediaDevices&&navigator.mediaDevices.getUserMedia){cam.hidden=false;cam.addEventListener('click',function(){if(stream){stop();return;}
navigator.mediaDevices.getUserMedia({video:{facingMode:'environment'},audio:false}).then(function(s){stream=s;video.srcObject=s;video.hidden=false;cam.textContent='Stop scanning';say('Point the camera at the QR code on the other child\\'s page.');return video.play();}).then(function tick(){if(!stream)return;(video.videoWidth?decode(video,video.videoWidth,video.videoHeight):Promise.resolve(null)).then(function(t){if(t!==null){stop();add(t);}else if(stream)setTimeout(tick,250);},function(){if(stream)setTimeout(tick,250);});}).catch(function(){stop();say('The camera is not available: use \u201cScan from a photo\u201d, or paste the link.');});});}
})();}`;
const SCRIPT_HASH = createHash('sha256').update(SCRIPT).digest('base64');

export const LANDING_CSP = [
  "default-src 'none'",
  "style-src 'unsafe-inline'",
  // 'self': the QR decoder (jsQR), fetched only where the browser has no BarcodeDetector for QR codes.
  `script-src 'self' 'sha256-${SCRIPT_HASH}'`,
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

const qrCache = new Map<string, Promise<string>>();

/** A URL as an inline SVG QR code (memoised: a page's URL changes only on rotation). */
export function qrSvg(url: string): Promise<string> {
  let svg = qrCache.get(url);
  if (!svg) {
    if (qrCache.size > 5000) qrCache.clear();
    svg = QRCode.toString(url, { type: 'svg', margin: 1, errorCorrectionLevel: 'M' });
    qrCache.set(url, svg);
  }
  return svg;
}

export type LandingScope = FeedScope | 'family';

/** What the page says to whom: a staff calendar is not a family's, a team's link is shared by its families. */
const WORDING: Record<LandingScope, { lead: string; keep: string; listHeading: string }> = {
  team: {
    lead: 'Subscribe once and your calendar app keeps every session and fixture of the team up to date.',
    keep: "Anyone with this address can see the team's calendar. Share it only with the team's families.",
    listHeading: 'Coming up',
  },
  student: {
    lead: "Subscribe once and your calendar app keeps your child's sessions and fixtures up to date.",
    keep: "This address is your child's own: anyone with it can see their calendar. Keep it among the family.",
    listHeading: 'Coming up',
  },
  activity: {
    lead: 'Subscribe once and your calendar app keeps every session of this activity up to date.',
    keep: 'Anyone with this address can see the whole activity\u2019s calendar. Share it only with its families.',
    listHeading: 'Coming up',
  },
  staff: {
    lead: 'Your sessions as staff, with staff notes. Subscribe on your phone and changes reach you on their own.',
    keep: 'This is your own staff calendar and it carries staff notes: do not forward it. If it leaks, ask the school office for a new address.',
    listHeading: 'Your next sessions',
  },
  family: {
    lead: 'One calendar for all of your family\u2019s links: subscribe once and your calendar app keeps it up to date.',
    keep: 'Anyone with this address can see these calendars. Keep it among the family.',
    listHeading: 'Coming up',
  },
};

export const APP_REFRESH_NOTE =
  'Calendar apps check for changes on their own schedule: Apple Calendar about every hour, Outlook every few hours, Google Calendar only every 12\u201324 hours.';
/** What is true of reminders in each app (a subscribed calendar's alerts are often dropped). */
export const REMINDER_APPS_NOTE =
  'Whether reminders go off depends on the app. Apple Calendar removes them from subscribed calendars unless you untick \u201cRemove Alarms\u201d (iPhone, iPad) or \u201cRemove Alerts\u201d (Mac) when you subscribe. Outlook.com and classic Outlook generally do not fire reminders from subscribed calendars. Google Calendar ignores them: set a notification for the calendar in Google instead.';

/** Past this age the page says the calendar may be out of date, unless the server says otherwise. */
export const DEFAULT_STALE_AFTER_MS = 60 * 60_000;
export const STALE_NOTE =
  'This calendar may be out of date: the school\u2019s system has not been read since. Check with the school before you travel.';

type ButtonKind = 'webcal' | 'google' | 'google-live' | 'outlook-com' | 'office365';

interface Button {
  kind: ButtonKind;
  label: string;
  href: string;
  external: boolean;
}

function buttons(links: SubscribeLinks, plainGoogle: string, liveGoogle: string | null): Button[] {
  return [
    { kind: 'webcal', label: 'Apple Calendar (iPhone, iPad, Mac)', href: links.webcal, external: false },
    liveGoogle
      ? {
          kind: 'google-live',
          label: 'Add to Google Calendar \u2014 updates within minutes',
          href: liveGoogle,
          external: true,
        }
      : { kind: 'google', label: 'Google Calendar', href: plainGoogle, external: true },
    { kind: 'outlook-com', label: 'Outlook.com', href: links.outlookCom, external: true },
    { kind: 'office365', label: 'Microsoft 365 (work or school)', href: links.office365, external: true },
  ];
}

const RECOMMENDED: Record<Device, { kind: 'apple' | 'google'; why: string }> = {
  ios: { kind: 'apple', why: 'Best for this iPhone or iPad: it adds the calendar to the Calendar app.' },
  mac: { kind: 'apple', why: 'Best for this Mac, iPhone or iPad: it adds the calendar to Apple Calendar.' },
  android: {
    kind: 'google',
    why: 'Best for this Android phone: the calendar appears in its Google Calendar app.',
  },
  desktop: {
    kind: 'google',
    why: 'Suggested for this computer. Use another button for your own calendar app.',
  },
};

function buttonHtml(b: Button, cls: string, recommended: boolean): string {
  const h = escapeHtml;
  return `<a class="btn ${cls}" href="${h(b.href)}" data-kind="${b.kind}"${recommended ? ' data-recommended="true"' : ''}${
    b.external ? ' rel="noreferrer noopener" target="_blank"' : ''
  }>${h(b.label)}</a>`;
}

/** "Tue 3 Mar": how a reported absence names its session's day. */
function shortDay(e: CalendarEvent, locale: string): string {
  return sessionDay(e.start, e.timeZone, locale, 'short');
}

/** A map of the venue: OpenStreetMap (a plain link, no script) and, on Android, the phone's maps app (geo:). */
function mapLinks(location: CalendarEvent['location'], device: Device): string {
  if (!location) return '';
  const { latitude: lat, longitude: lon } = location;
  const external = ' rel="noreferrer noopener" target="_blank"';
  if (lat === null || lon === null)
    return location.address
      ? `<a class="act" href="${escapeHtml(`https://www.openstreetmap.org/search?query=${encodeURIComponent(location.address)}`)}"${external}>Map</a>`
      : '';
  const osm = `https://www.openstreetmap.org/?mlat=${lat}&mlon=${lon}#map=17/${lat}/${lon}`;
  const geo = `geo:${lat},${lon}?q=${lat},${lon}(${encodeURIComponent(location.name)})`;
  return `<a class="act" href="${escapeHtml(osm)}"${external}>Map</a>${
    device === 'android' ? `<a class="act" href="${escapeHtml(geo)}">Directions</a>` : ''
  }`;
}

/** Under a session that takes place: add it alone to a calendar, and find its venue. */
export interface EventActions {
  /** The link of the session's own .ics (event-download.ts). */
  file: (e: CalendarEvent) => string;
  device: Device;
}

function actionsHtml(e: CalendarEvent, locale: string, when: string, actions?: EventActions): string {
  if (!actions || e.status === 'cancelled') return '';
  const day = sessionDay(e.start, e.timeZone, locale, 'long');
  // Every session's link says which session it adds (its visible words first, for voice control).
  const label = `Add to my calendar: ${e.title}, ${day} ${when}`;
  const add = `<a class="act" href="${escapeHtml(actions.file(e))}" aria-label="${escapeHtml(label)}">Add to my calendar</a>`;
  return `<p class="acts">${add}${mapLinks(e.location, actions.device)}</p>`;
}

function eventHtml(
  e: CalendarEvent,
  locale: string,
  absences?: LandingAbsences,
  actions?: EventActions,
): string {
  const h = escapeHtml;
  // The school's wall clock as every output prints it (calendar/times.ts): DST-marked, a later day named.
  const when = sessionTimeRange(e.start, e.end, e.timeZone, locale);
  const cancelled = e.status === 'cancelled';
  const place = e.location
    ? `<p class="where"><span class="label">Where</span> ${h(e.location.name)}${
        e.location.address && e.location.address !== e.location.name
          ? `<span class="address">, ${h(e.location.address)}</span>`
          : ''
      }</p>`
    : '';
  const details = e.description.trim() ? `<p class="details">${h(e.description.trim())}</p>` : '';
  return `<li class="event ${e.status}" id="session-${e.sessionId}" data-session="${e.sessionId}">${
    cancelled ? '<p class="badge" role="status">Cancelled</p>' : ''
  }<p class="when"><time datetime="${h(e.start)}">${h(when)}</time></p><h3 class="what">${h(e.title)}</h3>${place}${details}${actionsHtml(e, locale, when, actions)}${absenceHtml(absences, e, shortDay(e, locale))}</li>`;
}

function upcomingHtml(
  events: CalendarEvent[],
  locale: string,
  absences?: LandingAbsences,
  actions?: EventActions,
): string {
  if (!events.length) return '<p class="empty">Nothing coming up in this calendar yet.</p>';
  const out: string[] = [];
  let day = '';
  for (const e of events) {
    const key = sessionDate(e.start, e.timeZone);
    if (key !== day) {
      if (day) out.push('</ul></li>');
      day = key;
      const label = sessionDay(e.start, e.timeZone, locale, 'long');
      out.push(`<li class="day"><h3 class="date">${escapeHtml(label)}</h3><ul class="events">`);
    }
    out.push(eventHtml(e, locale, absences, actions));
  }
  out.push('</ul></li>');
  return `<ul class="days">${out.join('')}</ul>`;
}

/** One line above the fold: the next event that takes place. */
function nextHtml(events: CalendarEvent[], locale: string): string {
  const e = events.find((x) => x.status !== 'cancelled');
  if (!e) return '';
  const when = new Intl.DateTimeFormat(locale, {
    timeZone: e.timeZone,
    weekday: 'short',
    day: 'numeric',
    month: 'short',
    hour: '2-digit',
    minute: '2-digit',
  }).format(new Date(e.start));
  return `<p class="next">Next: <strong>${escapeHtml(when)}</strong> \u00b7 ${escapeHtml(e.title)}${
    e.location ? ` \u00b7 ${escapeHtml(e.location.name)}` : ''
  } <a href="#upcoming-h" class="more">All coming up</a></p>`;
}

function zoneLabel(timeZone: string, at: Date, locale: string): string {
  const part = new Intl.DateTimeFormat(locale, { timeZone, timeZoneName: 'short' })
    .formatToParts(at)
    .find((p) => p.type === 'timeZoneName')?.value;
  const city = timeZone.split('/').pop()?.replaceAll('_', ' ') ?? timeZone;
  return part ? `${city} time (${part})` : `${city} time`;
}

export interface LandingInput {
  scope: LandingScope;
  name: string;
  description: string;
  /** The page's own public URL: what the QR code encodes. */
  pageUrl: string;
  /** The plain calendar URL (`…/feeds/<token>.ics`). */
  feedUrl: string;
  reminder: ReminderKey;
  upcoming: CalendarEvent[];
  eventCount: number;
  timeZone: string;
  /** When rostercal last read the school's data successfully. */
  updatedAt: Date | null;
  /** How old updatedAt may get (a few pull intervals) before the page warns; default DEFAULT_STALE_AFTER_MS. */
  staleAfterMs?: number | null;
  now: Date;
  device: Device;
  /** A Google calendar rostercal keeps for this feed that families may add (public ACL). */
  liveGoogleCalendarId: string | null;
  /** False when the public URL is a local address outside the demo: a phone could not open it. */
  showQr: boolean;
  /** The capability the family-link form starts from; null where a family link makes no sense (staff). */
  familyFrom: string | null;
  /** Where the family-link form posts (`<public URL>/family`). */
  familyAction?: string;
  /** A family link's members, named for the family ("Ana", "Under 12 Netball"). */
  members?: string[];
  /** "Can't make it?" on each session a child of this link may miss (a child's page, a family page). */
  absences?: LandingAbsences;
  locale?: string;
}

export async function landingPage(input: LandingInput): Promise<string> {
  const h = escapeHtml;
  const locale = input.locale ?? 'en-GB';
  const words = WORDING[input.scope];
  const variantUrl =
    input.reminder === 'none'
      ? input.feedUrl
      : `${input.feedUrl}?reminder=${encodeURIComponent(input.reminder)}`;
  const links = subscribeLinks(variantUrl, input.name);
  // Google ignores VALARM: its button always adds the plain feed.
  const plainGoogle = subscribeLinks(input.feedUrl, input.name).google;
  const live = input.liveGoogleCalendarId ? liveGoogleLink(input.liveGoogleCalendarId) : null;
  const all = buttons(links, plainGoogle, live);
  const rec = RECOMMENDED[input.device];
  const recommended = all.find((b) =>
    rec.kind === 'apple' ? b.kind === 'webcal' : b.kind.startsWith('google'),
  )!;
  const others = all.filter((b) => b !== recommended);

  const fresh = input.updatedAt
    ? `Updated ${ago(input.updatedAt, input.now)} from the school's system.`
    : "Not yet read from the school's system: check back in a few minutes.";
  const stale =
    input.updatedAt !== null &&
    input.now.getTime() - input.updatedAt.getTime() > (input.staleAfterMs ?? DEFAULT_STALE_AFTER_MS);
  const qr = input.showQr ? await qrSvg(input.pageUrl) : '';
  const reminderOptions = REMINDER_KEYS.map(
    (k) => `<option value="${k}"${k === input.reminder ? ' selected' : ''}>${h(REMINDERS[k].label)}</option>`,
  ).join('');
  const members = input.members?.length
    ? `<p class="members">Includes: ${input.members.map((m) => `<span class="member">${h(m)}</span>`).join(', ')}</p>`
    : '';

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
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;background:#f5f6f8;color:#1d2330;line-height:1.4;overflow-wrap:anywhere}
main{max-width:42rem;margin:0 auto;padding:1.2rem .9rem 3rem}
h1{font-size:1.45rem;margin:.2rem 0 .4rem;line-height:1.25}
p{margin:.35rem 0}
p.lead{color:#374151}
p.fresh{color:#166534;font-weight:600}
p.fresh.stale{color:#7c2d12;background:#fff7ed;border-left:4px solid #c2410c;border-radius:0 8px 8px 0;padding:.5rem .7rem;font-weight:400}
p.fresh.stale strong{display:block;margin-top:.2rem}
p.next{background:#fff;border-radius:10px;padding:.5rem .7rem;border:1px solid #e5e7eb}
a.more{display:inline-flex;align-items:center;min-height:44px;color:#1f5fbf;font-weight:600;white-space:nowrap}
section{background:#fff;border-radius:12px;padding:1rem;margin:0 0 1rem;box-shadow:0 1px 3px rgba(0,0,0,.08)}
h2{font-size:1.1rem;margin:0 0 .7rem}
.btn{display:flex;align-items:center;justify-content:center;min-height:48px;padding:.6rem .9rem;border-radius:10px;text-decoration:none;font-weight:600;text-align:center}
.btn.primary{background:#1f5fbf;color:#fff;font-size:1.1rem;min-height:56px}
.btn.primary[data-kind^="google"]{background:#188038}
.others{display:grid;grid-template-columns:repeat(auto-fit,minmax(14rem,1fr));gap:.5rem;margin:.5rem 0 0}
.btn.secondary{background:#fff;color:#1f5fbf;border:2px solid #c7d5ee}
.why{color:#4b5563;font-size:.92rem}
.reminder{display:flex;flex-wrap:wrap;align-items:center;gap:.5rem;margin:.8rem 0 .2rem}
.reminder label{font-weight:600}
select,button,textarea,input{font:inherit}
select{min-height:44px;padding:.3rem .5rem;border-radius:8px;border:1px solid #9aa4b2;background:#fff;flex:1;min-width:10rem}
button{min-height:44px;min-width:44px;padding:.5rem .9rem;border-radius:8px;border:2px solid #1f5fbf;background:#fff;color:#1f5fbf;font-weight:600;cursor:pointer}
button.primary{background:#1f5fbf;color:#fff}
small,.note{color:#4b5563;font-size:.9rem}
.copy{display:flex;gap:.5rem}.copy input{flex:1;min-width:0;min-height:44px;padding:.5rem;font-size:.85rem;border:1px solid #cbd2dc;border-radius:8px}
.qr{display:flex;flex-wrap:wrap;gap:1rem;align-items:center}.qr svg{width:160px;height:160px;flex:none}.qr p{flex:1;min-width:10rem}
ul.days,ul.events{list-style:none;margin:0;padding:0}
li.day{margin:0 0 .8rem}
h3.date{font-size:.95rem;color:#374151;margin:.2rem 0 .4rem;padding-bottom:.2rem;border-bottom:1px solid #e5e7eb}
li.event{padding:.55rem .7rem;margin:0 0 .5rem;border-left:4px solid #1f5fbf;background:#f8fafc;border-radius:0 8px 8px 0}
li.event h3.what{font-size:1rem;margin:.1rem 0}
.when{color:#374151;font-variant-numeric:tabular-nums;font-weight:600}
.where .label{color:#6b7280;font-size:.85rem;text-transform:uppercase;letter-spacing:.03em;margin-right:.25rem}
.details{white-space:pre-line;color:#374151;font-size:.95rem}
li.event.cancelled{border-left-color:#b91c1c;background:#fef2f2}
li.event.cancelled .when time{text-decoration:line-through}
li.event.cancelled h3.what{color:#991b1b}
.badge{display:inline-block;background:#b91c1c;color:#fff;font-weight:700;font-size:.8rem;letter-spacing:.05em;text-transform:uppercase;padding:.15rem .5rem;border-radius:4px;margin:0 0 .2rem}
li.event.tentative{border-left-color:#b45309}
textarea{width:100%;min-height:5.5rem;padding:.5rem;border:1px solid #9aa4b2;border-radius:8px}
.member{font-weight:600}
.scan{display:flex;flex-wrap:wrap;gap:.5rem;margin:.5rem 0}
.scan-photo{display:inline-flex;align-items:center;min-height:44px;padding:.5rem .9rem;border-radius:8px;border:2px solid #1f5fbf;color:#1f5fbf;font-weight:600;cursor:pointer;position:relative}
.scan-photo input{position:absolute;width:0;height:0;opacity:0}
.scan-photo:focus-within{outline:2px solid #1f5fbf;outline-offset:2px}
.acts{display:flex;flex-wrap:wrap;gap:.5rem;margin:.45rem 0 .1rem}
a.act{display:inline-flex;align-items:center;min-height:44px;padding:0 .8rem;border-radius:8px;border:2px solid #c7d5ee;background:#fff;color:#1f5fbf;font-weight:600;text-decoration:none}
#scan-video{width:100%;max-height:50vh;border-radius:8px;background:#000}
[hidden]{display:none!important}
${input.absences ? ABSENCE_CSS : ''}
</style>
</head>
<body>
<main>
<h1>${h(input.name)}</h1>
<p class="lead">${h(input.description)} ${h(words.lead)}</p>
${members}
${nextHtml(input.upcoming, locale)}
<p class="fresh${stale ? ' stale' : ''}" data-updated="${input.updatedAt ? h(input.updatedAt.toISOString()) : ''}"${stale ? ' role="status"' : ''}>${h(fresh)}${stale ? ` <strong>${h(STALE_NOTE)}</strong>` : ''}</p>
<section class="subscribe" aria-labelledby="subscribe-h">
<h2 id="subscribe-h">Add to your calendar</h2>
${buttonHtml(recommended, 'primary', true)}
<p class="why">${h(rec.why)}${live && recommended.kind === 'google-live' ? ' Changes reach your Google Calendar within minutes.' : ''}</p>
<form class="reminder" method="get" action="">
<label for="reminder">Reminder</label>
<select id="reminder" name="reminder">${reminderOptions}</select>
<button type="submit">Apply</button>
</form>
<p class="note">${h(REMINDER_APPS_NOTE)}</p>
<h3 class="others-h">Other calendar apps</h3>
<div class="others">${others.map((b) => buttonHtml(b, 'secondary', false)).join('')}</div>
<p class="note refresh">${h(APP_REFRESH_NOTE)}${live ? ' The \u201cupdates within minutes\u201d button adds a calendar the school keeps in Google itself, so Google shows changes straight away.' : ''}</p>
</section>
<section class="upcoming" aria-labelledby="upcoming-h">
<h2 id="upcoming-h">${h(words.listHeading)}</h2>
${absenceDoneHtml(input.absences)}
${upcomingHtml(input.upcoming, locale, input.absences, {
  file: (e) => eventFileUrl(input.pageUrl, e.sessionId, input.reminder),
  device: input.device,
})}
<p><small>Times are ${h(zoneLabel(input.timeZone, input.now, locale))}. ${input.eventCount} event${input.eventCount === 1 ? '' : 's'} in this calendar.</small></p>
</section>
<section aria-labelledby="copy-h">
<h2 id="copy-h">Or copy the address</h2>
<div class="copy"><input id="feed-url" readonly value="${h(links.https)}" aria-label="Calendar address"><button type="button" data-copy="feed-url">Copy</button></div>
<p class="keep"><small>${h(words.keep)}</small></p>
</section>
${
  input.showQr
    ? `<section class="qr">
${qr}
<p>To open this page on your phone, scan the code with its camera.</p>
</section>`
    : ''
}
${
  input.familyFrom
    ? `<section class="family" id="family" aria-labelledby="family-h">
<h2 id="family-h">One link for the whole family</h2>
<p>Several children, or one child in several teams? Add another child's link: paste the links from their pages, one per line, or scan the QR codes on those pages, and get one calendar for all of them.</p>
<form method="post" action="${h(input.familyAction ?? '/family')}">
<input type="hidden" name="from" value="${h(input.familyFrom)}">
<label for="family-links" class="note">Other links</label>
<textarea id="family-links" name="links" rows="3" autocomplete="off" spellcheck="false" placeholder="https://\u2026/feeds/\u2026" data-decoder="${h(`${input.familyAction ?? '/family'}/qr-decoder.js`)}"></textarea>
<div class="scan">
<button type="button" id="scan-camera" hidden>Scan a QR code</button>
<label class="scan-photo" hidden>Scan from a photo<input type="file" id="scan-photo" accept="image/*"></label>
</div>
<video id="scan-video" playsinline muted hidden></video>
<p id="scan-status" class="note" role="status" aria-live="polite"></p>
<p><button type="submit" class="primary">Make one family link</button></p>
</form>
</section>`
    : ''
}
</main>
<script>${SCRIPT}</script>
</body>
</html>
`;
}
