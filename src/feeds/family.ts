// Family links: one capability URL (`/family/<token>`) for several feeds (a parent's children, a child's
// teams). A link names its members by the hash of each member feed's token at the time it was made, so a
// member whose own URL is rotated (or revoked) drops out of every family link at once; the link itself is a
// random 192-bit token of which only the hash is stored, like feed tokens.
import { createHash, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { type FamilyMemberEvents, familyEvents, familyLabel, joinNames } from '../calendar/family.ts';
import type { CalendarEvent } from '../calendar/types.ts';
import type { FamilyLink, FamilyMember, FeedScope, FeedToken, SchoolId, Store } from '../store/types.ts';
import { type FeedDef, getFeedDef } from './catalog.ts';
import type { FeedService, RenderedFeed } from './feed-cache.ts';
import { DEFAULT_MAX_BYTES, renderIcs } from './ics.ts';
import { hashToken, looksLikeToken, resolveFeedToken } from './tokens.ts';

const gzipAsync = promisify(gzip);

/** More than a family needs; keeps one link's calendar well under what calendar apps accept. */
export const MAX_FAMILY_MEMBERS = 12;

/** The capability tokens in pasted text: page or calendar URLs of feeds and family links, or bare tokens. */
export function tokensIn(text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(/(?:^|[^A-Za-z0-9_-])([A-Za-z0-9_-]{32})(?=$|[^A-Za-z0-9_-])/g)) {
    const t = m[1]!;
    if (looksLikeToken(t) && !found.includes(t)) found.push(t);
  }
  return found;
}

export type CreateResult =
  | { ok: true; token: string; link: FamilyLink }
  /** `unknown`: how many of the tokens named nothing live (each counts against the client, rate-limit.ts). */
  | { ok: false; status: 400; message: string; unknown?: number };

interface LiveMember extends FamilyMember {
  def: FeedDef;
  label: string;
}

export interface FamilyFeed {
  schoolId: SchoolId;
  name: string;
  description: string;
  timeZone: string;
  members: { scope: FeedScope; scopeId: number; label: string }[];
  body: Buffer;
  gzip: Buffer;
  etag: string;
  lastModified: Date;
  eventCount: number;
  upcoming: CalendarEvent[];
}

export class FamilyLinks {
  readonly #store: Store;
  readonly #feeds: FeedService;
  readonly #now: () => Date;
  readonly #serves: ((record: FeedToken) => Promise<boolean>) | null;
  readonly #cache = new Map<string, { key: string; feed: FamilyFeed }>();
  readonly #firstSeen = new Map<string, { etag: string; at: Date }>();

  constructor(opts: {
    store: Store;
    feeds: FeedService;
    now?: () => Date;
    /**
     * Whether a member's live feed token may be answered (the rotation guard, trust.ts): while its school's
     * current URLs cannot be told, a family link serves no more than its feeds would.
     */
    serves?: (record: FeedToken) => Promise<boolean>;
  }) {
    this.#store = opts.store;
    this.#feeds = opts.feeds;
    this.#now = opts.now ?? (() => new Date());
    this.#serves = opts.serves ?? null;
  }

  /** A live feed token that may be answered now, or null. */
  async #servedFeed(token: string): Promise<FeedToken | null> {
    const feed = await resolveFeedToken(this.#store, token);
    return feed && (!this.#serves || (await this.#serves(feed))) ? feed : null;
  }

  /**
   * A new family link for every feed the tokens name (feed tokens, and the members of family links), or why
   * not: unknown or replaced links, a staff calendar, two schools, too many members.
   */
  async create(tokens: string[]): Promise<CreateResult> {
    const bad = (message: string, unknown?: number): CreateResult => ({
      ok: false,
      status: 400,
      message,
      ...(unknown ? { unknown } : {}),
    });
    const members: FamilyMember[] = [];
    let schoolId: SchoolId | null = null;
    let unknown = 0;
    const add = (school: SchoolId, m: FamilyMember) => {
      schoolId ??= school;
      if (school !== schoolId) return false;
      if (!members.some((x) => x.scope === m.scope && x.scopeId === m.scopeId)) members.push(m);
      return true;
    };
    for (const token of tokens) {
      const feed = await this.#servedFeed(token);
      if (feed) {
        if (feed.scope === 'staff')
          return bad(
            'A staff calendar cannot be part of a family link: add children\u2019s or teams\u2019 links only.',
          );
        if (!add(feed.schoolId, { scope: feed.scope, scopeId: feed.scopeId, feedTokenHash: feed.tokenHash }))
          return bad('These links belong to different schools: make one family link per school.');
        continue;
      }
      const family = await this.#liveLink(token);
      if (family) {
        for (const m of family.members)
          if (!add(family.link.schoolId, m))
            return bad('These links belong to different schools: make one family link per school.');
        continue;
      }
      unknown++;
    }
    if (unknown)
      return bad(
        `${unknown === 1 ? 'One link was' : `${unknown} links were`} not recognised. Copy it from the child\u2019s calendar page (it may have been replaced by a newer link).`,
        unknown,
      );
    if (members.length < 2)
      return bad('Paste at least one more calendar link (another child\u2019s or another team\u2019s).');
    if (members.length > MAX_FAMILY_MEMBERS)
      return bad(`A family link holds at most ${MAX_FAMILY_MEMBERS} calendars.`);
    const token = randomBytes(24).toString('base64url');
    const link: FamilyLink = {
      schoolId: schoolId!,
      tokenHash: hashToken(token),
      members,
      createdAt: this.#now().toISOString(),
      revokedAt: null,
    };
    await this.#store.saveFamilyLink(link);
    return { ok: true, token, link };
  }

  /** The link behind a token with its members that still stand (their own URL not rotated, subject not gone). */
  async #liveLink(token: string): Promise<{ link: FamilyLink; members: LiveMember[] } | null> {
    if (!looksLikeToken(token)) return null;
    const link = await this.#store.findFamilyLinkByHash(hashToken(token));
    if (!link || link.revokedAt !== null) return null;
    const members: LiveMember[] = [];
    for (const m of link.members) {
      const feed = await this.#store.findFeedTokenByHash(m.feedTokenHash);
      if (!feed || feed.revokedAt !== null) continue;
      if (this.#serves && !(await this.#serves(feed))) continue;
      const def = await getFeedDef(this.#store, link.schoolId, m.scope, m.scopeId);
      if (!def) continue;
      members.push({ ...m, def, label: await this.#label(def) });
    }
    // Two children with one first name ("Ánh and Ánh", "(Ánh)") are told apart by their full names.
    const seen = new Map<string, number>();
    for (const m of members) seen.set(m.label, (seen.get(m.label) ?? 0) + 1);
    for (const m of members) if (m.scope === 'student' && seen.get(m.label)! > 1) m.label = m.def.subject;
    return members.length ? { link, members } : null;
  }

  /** A child by first name (the family knows them), a team or activity by its name. */
  async #label(def: FeedDef): Promise<string> {
    if (def.scope !== 'student') return familyLabel(def.subject);
    const s = await this.#store.get(def.schoolId, 'students', def.scopeId);
    return familyLabel(s?.firstName.trim() || def.subject);
  }

  /** The family's calendar now, or null when the link is unknown, revoked, or every member dropped out. */
  async get(token: string): Promise<FamilyFeed | null> {
    const live = await this.#liveLink(token);
    if (!live) return null;
    const { link, members } = live;
    const rendered = await Promise.all(
      members.map((m) => this.#feeds.get(link.schoolId, m.scope, m.scopeId)),
    );
    if (rendered.some((r) => r === null)) return null;
    // A team's or activity's label is its feed's name as the feed's audience reads it (the gate's).
    members.forEach((m, i) => {
      if (m.scope !== 'student') m.label = familyLabel((rendered[i] as RenderedFeed).def.subject);
    });
    const key = members
      .map((m, i) => `${m.scope}:${m.scopeId}:${m.label}:${(rendered[i] as RenderedFeed).etag}`)
      .join('|');
    const hit = this.#cache.get(link.tokenHash);
    if (hit && hit.key === key) return hit.feed;

    const labels = members.map((m) => m.label);
    const perMember: FamilyMemberEvents[] = [];
    for (const m of members) perMember.push({ label: m.label, events: await this.#feeds.eventsFor(m.def) });
    const events = familyEvents(link.schoolId, link.tokenHash.slice(0, 16), perMember);
    const school = (await this.#store.listSchools()).find((s) => s.id === link.schoolId);
    const schoolName = school?.name ?? link.schoolId;
    const timeZone = school?.timeZone ?? 'UTC';
    const name = `${joinNames(labels)} \u00b7 ${schoolName}`;
    const description = `Sessions and fixtures for ${joinNames(labels)} at ${schoolName}.`;
    const w = this.#feeds.currentWindow();
    const ics = renderIcs({ name, description, timeZone, window: w }, events, {
      maxBytes: DEFAULT_MAX_BYTES,
    });
    const body = Buffer.from(ics.body, 'utf8');
    const etag = createHash('sha256').update(body).digest('base64url').slice(0, 27);
    const seen = this.#firstSeen.get(link.tokenHash);
    const lastModified =
      seen && seen.etag === etag ? seen.at : new Date(Math.floor(this.#now().getTime() / 1000) * 1000);
    this.#firstSeen.set(link.tokenHash, { etag, at: lastModified });
    const nowIso = this.#now().toISOString();
    const feed: FamilyFeed = {
      schoolId: link.schoolId,
      name,
      description,
      timeZone,
      members: members.map((m) => ({ scope: m.scope, scopeId: m.scopeId, label: m.label })),
      body,
      gzip: await gzipAsync(body, { level: 6 }),
      etag,
      lastModified,
      eventCount: ics.eventCount,
      upcoming: events
        .filter((e) => e.end >= nowIso)
        .sort((a, b) => a.start.localeCompare(b.start))
        .slice(0, 8),
    };
    if (this.#cache.size > 2000) this.#cache.clear();
    this.#cache.set(link.tokenHash, { key, feed });
    return feed;
  }
}
