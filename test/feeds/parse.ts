// Parses a feed with three independent parsers (ical.js, node-ical and our strict RFC 5545 reader in strict.ts)
// and normalises what tests compare.
import ICAL from 'ical.js';
import nodeIcal, { type VEvent } from 'node-ical';
import { parseStrict } from './strict.ts';

export interface ParsedEvent {
  uid: string;
  sequence: number;
  status: string | null;
  summary: string;
  description: string;
  location: string;
  start: number;
  end: number;
  geo: { lat: number; lon: number } | null;
}

export interface ParsedFeed {
  name: string | null;
  description: string | null;
  events: ParsedEvent[];
}

// X-WR-CALNAME/CALDESC are TEXT by convention (Apple, Google); ical.js keeps unknown X- properties raw unless told.
const design = ICAL.design.defaultSet.property as Record<string, { defaultType: string }>;
design['x-wr-calname'] = { defaultType: 'text' };
design['x-wr-caldesc'] = { defaultType: 'text' };

export function parseWithIcalJs(text: string): ParsedFeed {
  const cal = new ICAL.Component(ICAL.parse(text));
  // Use the feed's own VTIMEZONE: a wrong VTIMEZONE then shows up as wrong instants.
  for (const tz of cal.getAllSubcomponents('vtimezone')) {
    const zone = new ICAL.Timezone(tz);
    ICAL.TimezoneService.remove(zone.tzid);
    ICAL.TimezoneService.register(zone, zone.tzid);
  }
  const events = cal.getAllSubcomponents('vevent').map((v) => {
    const e = new ICAL.Event(v);
    const geo = v.getFirstPropertyValue('geo') as unknown as [number, number] | null;
    return {
      uid: e.uid,
      sequence: Number(v.getFirstPropertyValue('sequence') ?? 0),
      status: (v.getFirstPropertyValue('status') as string | null) ?? null,
      summary: e.summary ?? '',
      description: e.description ?? '',
      location: e.location ?? '',
      start: e.startDate.toJSDate().getTime(),
      end: e.endDate.toJSDate().getTime(),
      geo: geo ? { lat: Number(geo[0]), lon: Number(geo[1]) } : null,
    };
  });
  return {
    name: (cal.getFirstPropertyValue('x-wr-calname') as string | null) ?? null,
    description: (cal.getFirstPropertyValue('x-wr-caldesc') as string | null) ?? null,
    events,
  };
}

function str(v: unknown): string {
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'object' && v !== null && 'val' in v) return String((v as { val: unknown }).val);
  return String(v);
}

export function parseWithNodeIcal(text: string): ParsedFeed {
  const data = nodeIcal.sync.parseICS(text);
  const events: ParsedEvent[] = [];
  let name: string | null = null;
  let description: string | null = null;
  for (const c of Object.values(data)) {
    if (!c) continue;
    if (c.type === 'VEVENT') {
      const e = c as VEvent;
      const geo = (e as unknown as { geo?: { lat: number; lon: number } }).geo;
      events.push({
        uid: e.uid,
        sequence: Number(e.sequence ?? 0),
        status: (e.status as string | undefined) ?? null,
        summary: str(e.summary),
        description: str(e.description),
        location: str(e.location),
        start: new Date(e.start).getTime(),
        end: e.end ? new Date(e.end).getTime() : Number.NaN,
        geo: geo ? { lat: Number(geo.lat), lon: Number(geo.lon) } : null,
      });
    } else if (c.type === 'VCALENDAR') {
      const cal = c as unknown as Record<string, unknown>;
      name = cal['WR-CALNAME'] !== undefined ? str(cal['WR-CALNAME']) : null;
      description = cal['WR-CALDESC'] !== undefined ? str(cal['WR-CALDESC']) : null;
    }
  }
  return { name, description, events };
}

/**
 * Parses with all three and checks they agree on every event; returns the ical.js view. The strict reader
 * throws on anything RFC 5545 forbids (component order, ambiguous local times, framing).
 */
export function parseAll(text: string): ParsedFeed {
  const a = parseWithIcalJs(text);
  const others = [
    ['node-ical', parseWithNodeIcal(text)],
    ['strict', parseStrict(text)],
  ] as const;
  const byUid = (x: ParsedEvent, y: ParsedEvent) => x.uid.localeCompare(y.uid);
  const sa = [...a.events].sort(byUid);
  for (const [who, b] of others) {
    const sb = [...b.events].sort(byUid);
    if (sa.length !== sb.length)
      throw new Error(`ical.js and ${who} disagree on event count: ${sa.length} vs ${sb.length}`);
    for (let i = 0; i < sa.length; i++) {
      const x = sa[i]!;
      const y = sb[i]!;
      for (const k of [
        'uid',
        'sequence',
        'status',
        'summary',
        'description',
        'location',
        'start',
        'end',
      ] as const) {
        if (x[k] !== y[k]) {
          throw new Error(
            `ical.js and ${who} disagree on ${k} of ${x.uid}: ${JSON.stringify(x[k])} vs ${JSON.stringify(y[k])}`,
          );
        }
      }
    }
  }
  return a;
}

/** The older name: it now runs all three parsers. */
export const parseBoth = parseAll;
