// A third, deliberately strict iCalendar parser of our own, written from RFC 5545 rather than from what
// lenient clients accept. Strict parsers in the field (golang-ical, ruby-icalendar before 2.10.1) reject or
// crash on things ical.js and node-ical let through, so this one fails loudly on:
// - line breaks other than CRLF, a missing CRLF after END:VCALENDAR, physical lines over 75 octets;
// - a property after the first sub-component of its component (§3.4, §3.6: calendar properties first);
// - VERSION/PRODID missing or repeated, METHOD other than PUBLISH, repeated single-use event properties;
// - malformed DATE-TIME values, UTC DTSTAMP/LAST-MODIFIED missing their Z, a TZID no VTIMEZONE defines;
// - a local time that the feed's own VTIMEZONE makes ambiguous (the repeated hour when clocks go back) or
//   nonexistent (the skipped hour): clients resolve those differently, so they must be written in UTC form.
// Its VTIMEZONE expansion is its own too (dated observances, RDATE, and yearly RRULEs by month and weekday), so
// the instants it returns are a third, independent reading of the times.
import type { ParsedEvent, ParsedFeed } from './parse.ts';

interface Prop {
  name: string;
  params: Record<string, string>;
  value: string;
  line: number;
}

interface Component {
  name: string;
  props: Prop[];
  children: Component[];
}

export class StrictIcsError extends Error {}

const NAME = /^[A-Za-z0-9-]+$/;
// Parameter values: quoted (no DQUOTE/controls inside) or safe characters (no ; : , DQUOTE).
const PARAM = /^([A-Za-z0-9-]+)=("[^"]*"|[^";:,]*)(?:,("[^"]*"|[^";:,]*))*$/;
/** CONTROL characters (RFC 5545 §3.1): anything below space except HTAB, and DEL. */
const hasControl = (v: string) =>
  [...v].some((c) => {
    const code = c.charCodeAt(0);
    return (code < 0x20 && code !== 0x09) || code === 0x7f;
  });

function fail(line: number, message: string): never {
  throw new StrictIcsError(`line ${line}: ${message}`);
}

function splitContentLine(text: string, line: number): Prop {
  // name *(";" param) ":" value — a colon inside a quoted parameter value does not end the name part.
  let i = 0;
  let quoted = false;
  let colon = -1;
  for (; i < text.length; i++) {
    const c = text[i];
    if (c === '"') quoted = !quoted;
    else if (c === ':' && !quoted) {
      colon = i;
      break;
    }
  }
  if (colon < 0) fail(line, `no ':' in content line ${JSON.stringify(text.slice(0, 40))}`);
  const head = text.slice(0, colon);
  const value = text.slice(colon + 1);
  const parts: string[] = [];
  let cur = '';
  quoted = false;
  for (const c of head) {
    if (c === '"') quoted = !quoted;
    if (c === ';' && !quoted) {
      parts.push(cur);
      cur = '';
    } else cur += c;
  }
  parts.push(cur);
  const name = parts[0]!.toUpperCase();
  if (!NAME.test(name)) fail(line, `bad property name ${JSON.stringify(parts[0])}`);
  const params: Record<string, string> = {};
  for (const p of parts.slice(1)) {
    if (!PARAM.test(p) || hasControl(p)) fail(line, `bad parameter ${JSON.stringify(p)} on ${name}`);
    const eq = p.indexOf('=');
    params[p.slice(0, eq).toUpperCase()] = p.slice(eq + 1).replace(/^"|"$/g, '');
  }
  if (hasControl(value)) fail(line, `control character in the value of ${name}`);
  return { name, params, value, line };
}

/** Physical lines → components, checking the framing rules on the way. */
function structure(text: string): Component {
  if (!text.endsWith('\r\n')) fail(0, 'the file does not end with CRLF');
  const physical = text.slice(0, -2).split('\r\n');
  physical.forEach((l, i) => {
    if (/[\r\n]/.test(l)) fail(i + 1, 'a line break that is not CRLF');
    if (Buffer.byteLength(l) > 75) fail(i + 1, `line longer than 75 octets (${Buffer.byteLength(l)})`);
  });
  const logical: { text: string; line: number }[] = [];
  physical.forEach((l, i) => {
    if (l.startsWith(' ') || l.startsWith('\t')) {
      const last = logical[logical.length - 1];
      if (!last) fail(i + 1, 'continuation line at the start of the file');
      last.text += l.slice(1);
    } else if (l === '') fail(i + 1, 'empty line');
    else logical.push({ text: l, line: i + 1 });
  });
  const stack: Component[] = [];
  let root: Component | null = null;
  for (const { text: t, line } of logical) {
    const p = splitContentLine(t, line);
    if (p.name === 'BEGIN') {
      const c: Component = { name: p.value.toUpperCase(), props: [], children: [] };
      const parent = stack[stack.length - 1];
      if (parent) parent.children.push(c);
      else if (root) fail(line, 'content after END:VCALENDAR');
      else root = c;
      stack.push(c);
    } else if (p.name === 'END') {
      const open = stack.pop();
      if (!open || open.name !== p.value.toUpperCase())
        fail(line, `END:${p.value} does not close ${open ? `BEGIN:${open.name}` : 'anything'}`);
    } else {
      const open = stack[stack.length - 1];
      if (!open) fail(line, `property ${p.name} outside any component`);
      if (open.children.length)
        fail(
          line,
          `property ${p.name} of ${open.name} after its sub-component BEGIN:${open.children[0]!.name} (RFC 5545 §3.4/§3.6: properties come first)`,
        );
      open.props.push(p);
    }
  }
  if (stack.length) fail(logical.length, `BEGIN:${stack[stack.length - 1]!.name} is never closed`);
  if (root?.name !== 'VCALENDAR') fail(1, 'the file is not a VCALENDAR');
  return root;
}

const all = (c: Component, name: string) => c.props.filter((p) => p.name === name);
const one = (c: Component, name: string, where: string, required: boolean): Prop | null => {
  const found = all(c, name);
  if (found.length > 1) fail(found[1]!.line, `${name} appears ${found.length} times in ${where}`);
  if (required && !found.length) fail(0, `${where} has no ${name}`);
  return found[0] ?? null;
};

interface Local {
  y: number;
  mo: number;
  d: number;
  h: number;
  mi: number;
  s: number;
  utc: boolean;
}

function parseDateTime(value: string, line: number): Local {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(Z?)$/.exec(value);
  if (!m) fail(line, `bad DATE-TIME ${JSON.stringify(value)}`);
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const check = new Date(Date.UTC(y, mo - 1, d, h, mi, s));
  if (check.getUTCMonth() !== mo - 1 || check.getUTCDate() !== d || h > 23 || mi > 59 || s > 60)
    fail(line, `impossible DATE-TIME ${value}`);
  return { y, mo, d, h, mi, s, utc: m[7] === 'Z' };
}

const asUtcMs = (l: Local) => Date.UTC(l.y, l.mo - 1, l.d, l.h, l.mi, l.s);

function parseOffset(value: string, line: number): number {
  const m = /^([+-])(\d{2})(\d{2})(\d{2})?$/.exec(value);
  if (!m) fail(line, `bad UTC offset ${JSON.stringify(value)}`);
  const min = Number(m[2]) * 60 + Number(m[3]) + Number(m[4] ?? 0) / 60;
  if (m[1] === '-' && min === 0) fail(line, 'UTC offset -0000 is not allowed');
  return m[1] === '-' ? -min : min;
}

const DAYS = ['SU', 'MO', 'TU', 'WE', 'TH', 'FR', 'SA'];

/** Local onset times (as UTC-epoch of the wall clock) of a yearly RRULE by month and weekday, up to a year. */
function expandYearly(rule: string, start: Local, line: number, untilYear: number): number[] {
  const parts = Object.fromEntries(rule.split(';').map((kv) => kv.split('=') as [string, string]));
  const known = new Set(['FREQ', 'BYMONTH', 'BYDAY', 'UNTIL', 'COUNT']);
  for (const k of Object.keys(parts))
    if (!known.has(k)) fail(line, `RRULE part ${k} is not supported by this strict reader`);
  if (parts.FREQ !== 'YEARLY') fail(line, `RRULE FREQ=${parts.FREQ} in a VTIMEZONE observance`);
  const month = Number(parts.BYMONTH);
  const by = /^([+-]?\d)?(SU|MO|TU|WE|TH|FR|SA)$/.exec(parts.BYDAY ?? '');
  if (!(month >= 1 && month <= 12) || !by) fail(line, `RRULE ${rule}: need BYMONTH and BYDAY=<n><day>`);
  const n = Number(by[1] ?? 1);
  const dow = DAYS.indexOf(by[2]!);
  const until = parts.UNTIL ? asUtcMs(parseDateTime(parts.UNTIL, line)) : Number.POSITIVE_INFINITY;
  const count = parts.COUNT ? Number(parts.COUNT) : Number.POSITIVE_INFINITY;
  const out: number[] = [];
  for (let y = start.y; y <= untilYear && out.length < count; y++) {
    let day: number;
    if (n > 0) {
      const first = new Date(Date.UTC(y, month - 1, 1)).getUTCDay();
      day = 1 + ((dow - first + 7) % 7) + (n - 1) * 7;
    } else {
      const lastDate = new Date(Date.UTC(y, month, 0)).getUTCDate();
      const lastDow = new Date(Date.UTC(y, month - 1, lastDate)).getUTCDay();
      day = lastDate - ((lastDow - dow + 7) % 7) + (n + 1) * 7;
    }
    const at = Date.UTC(y, month - 1, day, start.h, start.mi, start.s);
    if (at < asUtcMs(start)) continue;
    if (at > until) break;
    out.push(at);
  }
  return out;
}

interface Onset {
  /** The UTC instant the offset starts. */
  atMs: number;
  from: number;
  to: number;
}

class Zone {
  readonly onsets: Onset[];
  constructor(vtz: Component, untilYear: number) {
    const onsets: Onset[] = [];
    for (const obs of vtz.children) {
      if (obs.name !== 'STANDARD' && obs.name !== 'DAYLIGHT') fail(0, `${obs.name} inside VTIMEZONE`);
      const where = `a ${obs.name} observance`;
      const dt = one(obs, 'DTSTART', where, true)!;
      const start = parseDateTime(dt.value, dt.line);
      if (start.utc) fail(dt.line, 'an observance DTSTART must be a local time');
      const fromP = one(obs, 'TZOFFSETFROM', where, true)!;
      const toP = one(obs, 'TZOFFSETTO', where, true)!;
      const from = parseOffset(fromP.value, fromP.line);
      const to = parseOffset(toP.value, toP.line);
      const locals = [asUtcMs(start)];
      for (const r of all(obs, 'RRULE')) locals.push(...expandYearly(r.value, start, r.line, untilYear));
      for (const r of all(obs, 'RDATE'))
        for (const v of r.value.split(',')) locals.push(asUtcMs(parseDateTime(v, r.line)));
      for (const l of new Set(locals)) onsets.push({ atMs: l - from * 60_000, from, to });
    }
    if (!onsets.length) fail(0, 'VTIMEZONE without STANDARD or DAYLIGHT');
    this.onsets = onsets.sort((a, b) => a.atMs - b.atMs);
  }
  offsetAt(ms: number): number {
    let off = this.onsets[0]!.from;
    for (const o of this.onsets) {
      if (o.atMs > ms) break;
      off = o.to;
    }
    return off;
  }
  /** The one instant a local time means; fails when the zone makes it ambiguous or nonexistent. */
  instant(local: Local, line: number, tzid: string): number {
    const wall = asUtcMs(local);
    const candidates = new Set(this.onsets.flatMap((o) => [o.from, o.to]));
    const hits = [...candidates]
      .map((off) => wall - off * 60_000)
      .filter((ms) => this.offsetAt(ms) * 60_000 === wall - ms);
    const unique = [...new Set(hits)];
    if (unique.length === 0) fail(line, `local time ${fmt(local)} does not exist in ${tzid} (skipped hour)`);
    if (unique.length > 1)
      fail(line, `local time ${fmt(local)} is ambiguous in ${tzid} (repeated hour): write it in UTC`);
    return unique[0]!;
  }
}

const fmt = (l: Local) =>
  `${l.y}-${String(l.mo).padStart(2, '0')}-${String(l.d).padStart(2, '0')} ${String(l.h).padStart(2, '0')}:${String(l.mi).padStart(2, '0')}`;

function unescapeText(v: string): string {
  return v.replace(/\\([\\;,nN])/g, (_, c: string) => (c === 'n' || c === 'N' ? '\n' : c));
}

const ONCE_IN_EVENT = [
  'UID',
  'DTSTAMP',
  'DTSTART',
  'CLASS',
  'CREATED',
  'DESCRIPTION',
  'GEO',
  'LAST-MODIFIED',
  'LOCATION',
  'ORGANIZER',
  'PRIORITY',
  'SEQUENCE',
  'STATUS',
  'SUMMARY',
  'TRANSP',
  'URL',
  'RECURRENCE-ID',
  'DTEND',
  'DURATION',
];

/** This reader's own expansion of one VTIMEZONE block: the UTC offset (minutes) it gives at an instant. */
export function strictZoneOffset(vtimezoneText: string): (ms: number) => number {
  const cal = structure(`BEGIN:VCALENDAR\r\n${vtimezoneText}\r\nEND:VCALENDAR\r\n`);
  const zone = new Zone(cal.children[0]!, 2200);
  return (ms) => zone.offsetAt(ms);
}

export function parseStrict(text: string): ParsedFeed & { calendarProps: string[] } {
  const cal = structure(text);
  const version = one(cal, 'VERSION', 'VCALENDAR', true)!;
  if (version.value !== '2.0') fail(version.line, `VERSION:${version.value}`);
  one(cal, 'PRODID', 'VCALENDAR', true);
  const method = one(cal, 'METHOD', 'VCALENDAR', false);
  if (method && method.value !== 'PUBLISH') fail(method.line, `METHOD:${method.value} in a published feed`);
  for (const c of cal.children)
    if (
      !['VEVENT', 'VTIMEZONE', 'VTODO', 'VJOURNAL', 'VFREEBUSY'].includes(c.name) &&
      !c.name.startsWith('X-')
    )
      fail(0, `${c.name} inside VCALENDAR`);

  const untilYear = 2200;
  const zones = new Map<string, Zone>();
  for (const vtz of cal.children.filter((c) => c.name === 'VTIMEZONE')) {
    const tzid = one(vtz, 'TZID', 'VTIMEZONE', true)!.value;
    if (zones.has(tzid)) fail(0, `two VTIMEZONEs for ${tzid}`);
    zones.set(tzid, new Zone(vtz, untilYear));
  }

  const instant = (p: Prop): number => {
    if (p.params.VALUE === 'DATE') fail(p.line, `${p.name} as a DATE is not expected in these feeds`);
    const local = parseDateTime(p.value, p.line);
    const tzid = p.params.TZID;
    if (tzid !== undefined) {
      if (local.utc) fail(p.line, `${p.name} has both TZID and a UTC time`);
      const zone = zones.get(tzid);
      if (!zone) fail(p.line, `${p.name} names TZID=${tzid}, which no VTIMEZONE defines`);
      return zone.instant(local, p.line, tzid);
    }
    if (!local.utc) fail(p.line, `${p.name} is a floating time`);
    return asUtcMs(local);
  };

  const events: ParsedEvent[] = [];
  for (const v of cal.children.filter((c) => c.name === 'VEVENT')) {
    for (const name of ONCE_IN_EVENT) one(v, name, 'VEVENT', false);
    const uid = one(v, 'UID', 'VEVENT', true)!.value;
    const stamp = one(v, 'DTSTAMP', `VEVENT ${uid}`, true)!;
    if (!parseDateTime(stamp.value, stamp.line).utc) fail(stamp.line, 'DTSTAMP must be UTC');
    const lm = one(v, 'LAST-MODIFIED', `VEVENT ${uid}`, false);
    if (lm && !parseDateTime(lm.value, lm.line).utc) fail(lm.line, 'LAST-MODIFIED must be UTC');
    const dtstart = one(v, 'DTSTART', `VEVENT ${uid}`, true)!;
    const dtend = one(v, 'DTEND', `VEVENT ${uid}`, false);
    if (dtend && one(v, 'DURATION', `VEVENT ${uid}`, false)) fail(dtend.line, 'both DTEND and DURATION');
    const start = instant(dtstart);
    const end = dtend ? instant(dtend) : start;
    if (end < start) fail(dtend?.line ?? 0, `${uid} ends before it starts`);
    const seq = one(v, 'SEQUENCE', 'VEVENT', false);
    if (seq && !/^\d+$/.test(seq.value)) fail(seq.line, `SEQUENCE:${seq.value}`);
    const status = one(v, 'STATUS', 'VEVENT', false);
    if (status && !['TENTATIVE', 'CONFIRMED', 'CANCELLED'].includes(status.value))
      fail(status.line, `STATUS:${status.value} in a VEVENT`);
    const geo = one(v, 'GEO', 'VEVENT', false);
    let geoValue: ParsedEvent['geo'] = null;
    if (geo) {
      const m = /^(-?\d+(?:\.\d+)?);(-?\d+(?:\.\d+)?)$/.exec(geo.value);
      if (!m) fail(geo.line, `GEO:${geo.value}`);
      geoValue = { lat: Number(m[1]), lon: Number(m[2]) };
    }
    for (const child of v.children)
      if (child.name !== 'VALARM' && !child.name.startsWith('X-')) fail(0, `${child.name} inside VEVENT`);
    const textOf = (name: string) => unescapeText(one(v, name, 'VEVENT', false)?.value ?? '');
    events.push({
      uid,
      sequence: Number(seq?.value ?? 0),
      status: status?.value ?? null,
      summary: textOf('SUMMARY'),
      description: textOf('DESCRIPTION'),
      location: textOf('LOCATION'),
      start,
      end,
      geo: geoValue,
    });
  }
  const calText = (name: string) => {
    const p = one(cal, name, 'VCALENDAR', false);
    return p ? unescapeText(p.value) : null;
  };
  return {
    name: calText('X-WR-CALNAME'),
    description: calText('X-WR-CALDESC'),
    events,
    calendarProps: cal.props.map((p) => p.name),
  };
}
