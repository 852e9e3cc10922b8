// The page a person opens at /feeds/<token> (or a family link): what is coming up, how fresh it is, and the
// subscribe button that suits their device first, the others below. Every text that came from data is
// HTML-escaped and comes from the projection (calendar/) as the feed carries it; the only markup not written
// here is the QR code's SVG, which the qrcode package generates from the page's URL alone.
import { LRUCache } from 'lru-cache';
import QRCode from 'qrcode';
import { sessionDate, sessionDay, sessionStart, sessionTimeRange, zoneShortName } from '../calendar/times.ts';
import type { CalendarEvent } from '../calendar/types.ts';
import { REMINDER_KEYS, REMINDERS, type ReminderKey } from '../feeds/reminders.ts';
import type { FeedScope } from '../store/types.ts';
import { html, join, type SafeHtml, trustedMarkup } from '../util/html.ts';
import { absenceDoneHtml, absenceHtml, type LandingAbsences } from './absence-form.ts';
import type { Device } from './device.ts';
import { eventFileUrl } from './event-download.ts';
import { ago } from './freshness.ts';
import { parentLayout } from './layouts.ts';

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

const qrCache = new LRUCache<string, Promise<string>>({ max: 5000 });

/** A URL as an inline SVG QR code (memoised: a page's URL changes only on rotation). */
export function qrSvg(url: string): Promise<string> {
  let svg = qrCache.get(url);
  if (!svg) {
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

function buttonHtml(b: Button, cls: string, recommended: boolean): SafeHtml {
  return html`<a class="btn ${cls}" href="${b.href}" data-kind="${b.kind}"${recommended && html` data-recommended="true"`}${
    b.external && html` rel="noreferrer noopener" target="_blank"`
  }>${b.label}</a>`;
}

/** "Tue 3 Mar": how a reported absence names its session's day. */
function shortDay(e: CalendarEvent, locale: string): string {
  return sessionDay(e.start, e.timeZone, locale, 'short');
}

/** A map of the venue: OpenStreetMap (a plain link, no script) and, on Android, the phone's maps app (geo:). */
function mapLinks(location: CalendarEvent['location'], device: Device): SafeHtml {
  if (!location) return html``;
  const { latitude: lat, longitude: lon } = location;
  const external = html` rel="noreferrer noopener" target="_blank"`;
  if (lat === null || lon === null)
    return html`${
      location.address &&
      html`<a class="act" href="${`https://www.openstreetmap.org/search?query=${encodeURIComponent(location.address)}`}"${external}>Map</a>`
    }`;
  const osm = `https://www.openstreetmap.org/?mlat=${lat}&mlon=${lon}#map=17/${lat}/${lon}`;
  const geo = `geo:${lat},${lon}?q=${lat},${lon}(${encodeURIComponent(location.name)})`;
  return html`<a class="act" href="${osm}"${external}>Map</a>${
    device === 'android' && html`<a class="act" href="${geo}">Directions</a>`
  }`;
}

/** Under a session that takes place: add it alone to a calendar, and find its venue. */
export interface EventActions {
  /** The link of the session's own .ics (event-download.ts). */
  file: (e: CalendarEvent) => string;
  device: Device;
}

function actionsHtml(e: CalendarEvent, locale: string, when: string, actions?: EventActions): SafeHtml {
  if (!actions || e.status === 'cancelled' || e.noGame) return html``;
  const day = sessionDay(e.start, e.timeZone, locale, 'long');
  // Every session's link says which session it adds (its visible words first, for voice control).
  const label = `Add to my calendar: ${e.title}, ${day} ${when}`;
  return html`<p class="acts"><a class="act" href="${actions.file(e)}" aria-label="${label}">Add to my calendar</a>${mapLinks(e.location, actions.device)}</p>`;
}

function eventHtml(
  e: CalendarEvent,
  locale: string,
  absences?: LandingAbsences,
  actions?: EventActions,
): SafeHtml {
  // The school's wall clock as every output prints it (calendar/times.ts): DST-marked, a later day named.
  const when = sessionTimeRange(e.start, e.end, e.timeZone, locale);
  const place =
    e.location &&
    html`<p class="where"><span class="label">Where</span> ${e.location.name}${
      e.location.address &&
      e.location.address !== e.location.name &&
      html`<span class="address">, ${e.location.address}</span>`
    }</p>`;
  const description = e.description.trim();
  return html`<li class="event ${e.status}" id="session-${e.sessionId}" data-session="${e.sessionId}">${
    e.status === 'cancelled' && html`<p class="badge" role="status">Cancelled</p>`
  }${e.noGame && e.status !== 'cancelled' && html`<p class="badge bye">No game</p>`}<p class="when"><time datetime="${e.start}">${when}</time></p><h3 class="what">${e.title}</h3>${place}${
    description && html`<p class="details">${description}</p>`
  }${actionsHtml(e, locale, when, actions)}${absenceHtml(absences, e, shortDay(e, locale), locale)}</li>`;
}

function upcomingHtml(
  events: CalendarEvent[],
  locale: string,
  absences?: LandingAbsences,
  actions?: EventActions,
): SafeHtml {
  if (!events.length) return html`<p class="empty">Nothing coming up in this calendar yet.</p>`;
  // One list item per day (in the event's own zone), the day's events inside.
  const days: { label: string; events: SafeHtml[] }[] = [];
  let key = '';
  for (const e of events) {
    const k = sessionDate(e.start, e.timeZone);
    if (k !== key) {
      key = k;
      days.push({ label: sessionDay(e.start, e.timeZone, locale, 'long'), events: [] });
    }
    days.at(-1)!.events.push(eventHtml(e, locale, absences, actions));
  }
  return html`<ul class="days">${days.map(
    (d) => html`<li class="day"><h3 class="date">${d.label}</h3><ul class="events">${d.events}</ul></li>`,
  )}</ul>`;
}

/** What the list shows of the calendar, in numbers that match it: the calendar also holds recent past events. */
function shownCount(shown: number, total: number): string {
  const all = `${total} event${total === 1 ? '' : 's'}`;
  if (shown === 0) return `The calendar holds ${all}, none of them coming up.`;
  return shown >= total
    ? `Showing all ${all} in this calendar.`
    : `Showing the next ${shown}; the calendar holds ${all}, recent past ones included.`;
}

/** One line above the fold: the next event that takes place. */
function nextHtml(events: CalendarEvent[], locale: string): SafeHtml {
  const e = events.find((x) => x.status !== 'cancelled' && !x.noGame);
  if (!e) return html``;
  const when = sessionStart(e.start, e.timeZone, locale);
  return html`<p class="next">Next: <strong>${when}</strong> \u00b7 ${e.title}${
    e.location && html` \u00b7 ${e.location.name}`
  } <a href="#upcoming-h" class="more">All coming up</a></p>`;
}

function zoneLabel(timeZone: string, at: Date, locale: string): string {
  const part = zoneShortName(timeZone, at, locale);
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
  /** A family link's members that dropped out (their own link rotated): what happened and how to add them back. */
  lost?: { title: string; body: string }[];
  /** "Can't make it?" on each session a child of this link may miss (a child's page, a family page). */
  absences?: LandingAbsences;
  locale?: string;
}

/** Above the fold: the calendar's name, what it is, whom a family link holds, the next session, how fresh it is. */
function headingPart(input: LandingInput, locale: string): SafeHtml {
  const words = WORDING[input.scope];
  const fresh = input.updatedAt
    ? `Updated ${ago(input.updatedAt, input.now)} from the school's system.`
    : "Not yet read from the school's system: check back in a few minutes.";
  const stale =
    input.updatedAt !== null &&
    input.now.getTime() - input.updatedAt.getTime() > (input.staleAfterMs ?? DEFAULT_STALE_AFTER_MS);
  const members =
    input.members?.length &&
    html`<p class="members">Includes: ${join(
      input.members.map((m) => html`<span class="member">${m}</span>`),
      ', ',
    )}</p>`;
  const lost = (input.lost ?? []).map(
    (l) => html`<div class="notice lost" role="status"><h2>${l.title}</h2><p>${l.body}</p></div>`,
  );
  return html`<h1>${input.name}</h1>
<p class="lead">${input.description} ${words.lead}</p>
${lost}${members || ''}
${nextHtml(input.upcoming, locale)}
<p class="fresh${stale && ' stale'}" data-updated="${input.updatedAt?.toISOString() ?? ''}"${stale && html` role="status"`}>${fresh}${
    stale && html` <strong>${STALE_NOTE}</strong>`
  }</p>`;
}

/** The subscribe buttons: the one that suits the visitor's device first, the reminder choice, the others below. */
function subscribePart(input: LandingInput, links: SubscribeLinks): SafeHtml {
  // Google ignores VALARM: its button always adds the plain feed.
  const plainGoogle = subscribeLinks(input.feedUrl, input.name).google;
  const live = input.liveGoogleCalendarId ? liveGoogleLink(input.liveGoogleCalendarId) : null;
  const all = buttons(links, plainGoogle, live);
  const rec = RECOMMENDED[input.device];
  const recommended = all.find((b) =>
    rec.kind === 'apple' ? b.kind === 'webcal' : b.kind.startsWith('google'),
  )!;
  const others = all.filter((b) => b !== recommended);
  const reminderOptions = REMINDER_KEYS.map(
    (k) =>
      html`<option value="${k}"${k === input.reminder && html` selected`}>${REMINDERS[k].label}</option>`,
  );
  return html`<section class="subscribe" aria-labelledby="subscribe-h">
<h2 id="subscribe-h">Add to your calendar</h2>
${buttonHtml(recommended, 'primary', true)}
<p class="why">${rec.why}${live && recommended.kind === 'google-live' && ' Changes reach your Google Calendar within minutes.'}</p>
<form class="reminder" method="get" action="">
<label for="reminder">Reminder</label>
<select id="reminder" name="reminder">${reminderOptions}</select>
<button type="submit">Apply</button>
</form>
<p class="note">${REMINDER_APPS_NOTE}</p>
<h3 class="others-h">Other calendar apps</h3>
<div class="others">${others.map((b) => buttonHtml(b, 'secondary', false))}</div>
<p class="note refresh">${APP_REFRESH_NOTE}${live && ' The \u201cupdates within minutes\u201d button adds a calendar the school keeps in Google itself, so Google shows changes straight away.'}</p>
</section>`;
}

function upcomingPart(input: LandingInput, locale: string): SafeHtml {
  const actions: EventActions = {
    file: (e) => eventFileUrl(input.pageUrl, e.sessionId, input.reminder),
    device: input.device,
  };
  return html`<section class="upcoming" aria-labelledby="upcoming-h">
<h2 id="upcoming-h">${WORDING[input.scope].listHeading}</h2>
${absenceDoneHtml(input.absences)}
${upcomingHtml(input.upcoming, locale, input.absences, actions)}
<p><small>Times are ${zoneLabel(input.timeZone, input.now, locale)}. ${shownCount(input.upcoming.length, input.eventCount)}</small></p>
</section>`;
}

function copyPart(input: LandingInput, links: SubscribeLinks): SafeHtml {
  return html`<section aria-labelledby="copy-h">
<h2 id="copy-h">Or copy the address</h2>
<div class="copy"><input id="feed-url" readonly value="${links.https}" aria-label="Calendar address"><button type="button" data-copy="feed-url">Copy</button></div>
<p class="keep"><small>${WORDING[input.scope].keep}</small></p>
</section>`;
}

async function qrPart(input: LandingInput): Promise<SafeHtml> {
  if (!input.showQr) return html``;
  // The qrcode package's SVG, made from the page's own URL alone.
  const qr = trustedMarkup(await qrSvg(input.pageUrl));
  return html`<section class="qr">
${qr}
<p>${
    input.device === 'ios' || input.device === 'android'
      ? 'To open this page on another phone or tablet (another parent\u2019s, say), scan the code with its camera.'
      : 'To open this page on your phone, scan the code with its camera.'
  }</p>
</section>`;
}

/** "One link for the whole family": other children's links pasted or scanned (assets/landing.js), one calendar. */
function familyPart(input: LandingInput): SafeHtml {
  if (!input.familyFrom) return html``;
  return html`<section class="family" id="family" aria-labelledby="family-h">
<h2 id="family-h">One link for the whole family</h2>
<p>Several children, or one child in several teams? Add another child's link: paste the links from their pages, one per line, or scan the QR codes on those pages, and get one calendar for all of them.</p>
${familyForm({ from: input.familyFrom, action: input.familyAction ?? '/family', links: '' })}
</section>`;
}

/** The family-link form; `links` is what was pasted (a form that failed comes back filled in). */
export function familyForm(f: { from: string; action: string; links: string }): SafeHtml {
  return html`<form method="post" action="${f.action}">
<input type="hidden" name="from" value="${f.from}">
<label for="family-links" class="note">Other links</label>
<textarea id="family-links" name="links" rows="3" autocomplete="off" spellcheck="false" placeholder="https://\u2026/feeds/\u2026" data-decoder="${`${f.action}/qr-decoder.js`}">${f.links}</textarea>
<div class="scan">
<button type="button" id="scan-camera" hidden>Scan a QR code</button>
<label class="scan-photo" hidden>Scan from a photo<input type="file" id="scan-photo" accept="image/*"></label>
</div>
<video id="scan-video" playsinline muted hidden></video>
<p id="scan-status" class="note" role="status" aria-live="polite"></p>
<p><button type="submit" class="primary">Make one family link</button></p>
</form>`;
}

export async function landingPage(input: LandingInput): Promise<string> {
  const locale = input.locale ?? 'en-GB';
  const variantUrl =
    input.reminder === 'none'
      ? input.feedUrl
      : `${input.feedUrl}?reminder=${encodeURIComponent(input.reminder)}`;
  const links = subscribeLinks(variantUrl, input.name);
  return parentLayout({
    title: input.name,
    landing: { absences: input.absences !== undefined },
    body: html`${headingPart(input, locale)}
${subscribePart(input, links)}
${upcomingPart(input, locale)}
${copyPart(input, links)}
${await qrPart(input)}
${familyPart(input)}`,
  });
}
