// GET <capability page>/events/<session>.ics: one coming session of a feed (or family link) as a file a parent's
// calendar app adds, offered beside each session on the landing page. Served by the same capability as the page,
// so a rotated, revoked or unknown link answers the same 404 here too; only sessions the page lists (its upcoming
// events) are offered, cut from the feed's own bytes (feeds/single-event.ts).
import type { Response } from 'express';
import type { CalendarEvent } from '../calendar/types.ts';
import type { ReminderKey } from '../feeds/reminders.ts';
import { singleEventIcs } from '../feeds/single-event.ts';
import { tokenForLog } from '../feeds/tokens.ts';
import { setSecurityHeaders } from './security.ts';

/** The link of one event's file under a page's URL (the reminder the parent chose rides along). */
export function eventFileUrl(pageUrl: string, sessionId: number, reminder: ReminderKey): string {
  return `${pageUrl}/events/${sessionId}.ics${reminder === 'none' ? '' : `?reminder=${encodeURIComponent(reminder)}`}`;
}

/** Names the route for the request log, the token cut short; the session id, or null when the name is not one. */
export function eventPath(
  res: Response,
  base: '/feeds' | '/family',
  token: string,
  file: string,
): number | null {
  res.locals.route = `${base}/:token/events/:session.ics`;
  res.locals.logPath = `${base}/${tokenForLog(token)}/events/${file}`;
  const m = /^([1-9][0-9]{0,15})\.ics$/.exec(file);
  return m ? Number(m[1]) : null;
}

function fileName(title: string): string {
  const slug = title
    .normalize('NFKD')
    .replace(/[^\w\s-]/g, '')
    .trim()
    .replace(/\s+/g, '-')
    .toLowerCase()
    .slice(0, 60);
  return `${slug || 'event'}.ics`;
}

/** Sends the event of `sessionId` among `upcoming` from the calendar `ics`; false (nothing sent) when there is none. */
export function sendEventFile(
  res: Response,
  opts: {
    ics: string;
    upcoming: readonly CalendarEvent[];
    sessionId: number | null;
    securityHeaders: readonly [string, string][];
  },
): boolean {
  const event =
    opts.sessionId === null ? undefined : opts.upcoming.find((e) => e.sessionId === opts.sessionId);
  const body = event ? singleEventIcs(opts.ics, event.uid) : null;
  if (!event || body === null) return false;
  setSecurityHeaders(res, opts.securityHeaders);
  res.status(200);
  res.setHeader('Content-Type', 'text/calendar; charset=utf-8');
  res.setHeader('Cache-Control', 'private, no-cache');
  res.setHeader('Content-Disposition', `inline; filename="${fileName(event.title)}"`);
  res.end(body);
  return true;
}
