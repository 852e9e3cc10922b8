// Family links: one capability URL (`/family/<token>`) for several feeds (a parent's children, a child's
// teams). A link names its members by the hash of each member feed's token at the time it was made, so a
// member whose own URL is rotated (or revoked) drops out of every family link at once; the link itself is a
// random 192-bit token of which only the hash is stored, like feed tokens. A member that dropped out is not
// forgotten in silence: the page names it and says how to add its new link, and the calendar carries one event
// saying the same (lostNotices), so a family does not just see a child's sessions vanish.
import { createHash, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { gunzip, gzip } from 'node:zlib';
import { LRUCache } from 'lru-cache';
import {
  distinctLabels,
  type FamilyMemberEvents,
  familyEvents,
  familyLabel,
  joinNames,
  type LostMember,
  lostNotices,
} from '../calendar/family.ts';
import type { CalendarEvent } from '../calendar/types.ts';
import type { FamilyLink, FamilyMember, FeedScope, FeedToken, SchoolId, Store } from '../store/types.ts';
import { isStoreUnreachable, StoreUnreachableError } from '../store/unreachable.ts';
import { versionFeedEvents } from './event-versions.ts';
import { type FeedDef, getFeedDef } from './feed-defs.ts';
import { etagOf, httpInstant, upcomingOf } from './feed-renderer.ts';
import type { FeedService, RenderedFeed } from './feed-service.ts';
import { DEFAULT_MAX_BYTES, renderIcs } from './ics-writer.ts';
import { type FeedTokenResolver, hashToken, looksLikeToken, resolveFeedToken } from './tokens.ts';

const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);

/**
 * The key of a family's calendar among the store's rendered feeds and feed event versions (scope `family`): 48
 * bits of its link's token hash, itself a hash of a random 192-bit token, so two links of a school share one
 * with a chance of about n² / 2⁴⁹ (one in fifty million for ten thousand links).
 */
export function familyFeedId(tokenHash: string): number {
  return Number.parseInt(tokenHash.slice(0, 12), 16);
}

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

/** What a family calendar is besides its bytes: worked out from the link on each request. */
interface FamilyShell {
  schoolId: SchoolId;
  name: string;
  description: string;
  timeZone: string;
  members: { scope: FeedScope; scopeId: number; label: string }[];
  /** Members whose own link was replaced or stopped since the family link was made (they dropped out). */
  lost: LostMember[];
}

export interface FamilyFeed extends FamilyShell {
  body: Buffer;
  gzip: Buffer;
  etag: string;
  lastModified: Date;
  eventCount: number;
  upcoming: CalendarEvent[];
}

/** What a family link reads of the feed service: its members' feeds and events, and the request-write hooks. */
export type FamilyFeeds = Pick<
  FeedService,
  'get' | 'currentWindow' | 'eventsFor' | 'spare' | 'toldOfRequestWrite'
>;

export class FamilyLinks {
  readonly #store: Pick<Store, 'records' | 'feeds' | 'links'>;
  readonly #feeds: FamilyFeeds;
  readonly #now: () => Date;
  readonly #serves: ((record: FeedToken) => Promise<boolean>) | null;
  /** The families being polled, by link (a bounded memory; the store keeps every render). */
  readonly #cache = new LRUCache<string, { inputs: string; feed: FamilyFeed }>({ max: 2000 });
  readonly #inflight = new Map<string, Promise<FamilyFeed>>();
  readonly #revocations: Pick<FeedTokenResolver, 'epoch' | 'confirm' | 'answersFromMemory'> | null;
  /** What each link last answered, under which revocation epoch: served while the store cannot be reached. */
  readonly #confirmed = new LRUCache<string, { epoch: number; feed: FamilyFeed }>({ max: 2000 });

  constructor(opts: {
    store: Pick<Store, 'records' | 'feeds' | 'links'>;
    feeds: FamilyFeeds;
    now?: () => Date;
    /**
     * Whether a member's live feed token may be answered (the rotation guard, trust.ts): while its school's
     * current URLs cannot be told, a family link serves no more than its feeds would.
     */
    serves?: (record: FeedToken) => Promise<boolean>;
    /**
     * The feed token lookup's revocation epoch (tokens.ts): without it a link is never answered from memory while
     * the store cannot be reached.
     */
    revocations?: Pick<FeedTokenResolver, 'epoch' | 'confirm' | 'answersFromMemory'>;
  }) {
    this.#store = opts.store;
    this.#feeds = opts.feeds;
    this.#now = opts.now ?? (() => new Date());
    this.#serves = opts.serves ?? null;
    this.#revocations = opts.revocations ?? null;
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
    await this.#store.links.saveFamilyLink(link);
    return { ok: true, token, link };
  }

  /**
   * The link behind a token with its members that still stand (their own URL not rotated, subject not gone), and
   * those whose own URL was rotated or stopped since (`lost`).
   */
  async #liveLink(
    token: string,
  ): Promise<{ link: FamilyLink; members: LiveMember[]; lost: LostMember[] } | null> {
    if (!looksLikeToken(token)) return null;
    const link = await this.#store.links.findFamilyLinkByHash(hashToken(token));
    if (!link || link.revokedAt !== null) return null;
    const members: LiveMember[] = [];
    const lost: LostMember[] = [];
    const lostNames: string[] = [];
    for (const m of link.members) {
      const feed = await this.#store.links.findFeedTokenByHash(m.feedTokenHash);
      if (!feed) continue;
      // While its school's current URLs cannot be told, a member is neither served nor said to be lost.
      if (this.#serves && !(await this.#serves(feed))) continue;
      if (feed.revokedAt !== null) {
        const gone = await this.#lostMember(link.schoolId, m, feed.revokedAt);
        if (gone) {
          lost.push(gone.member);
          lostNames.push(gone.fullName);
        }
        continue;
      }
      const def = await getFeedDef(this.#store, link.schoolId, m.scope, m.scopeId);
      if (!def) continue;
      members.push({ ...m, def, label: await this.#label(def) });
    }
    // Two children with one first name ("Ánh and Ánh", "(Ánh)") are told apart by their full names, also when
    // one of them dropped out (a rotation): the one left and the notice of the one gone both say which.
    const all = [...members, ...lost];
    const labels = distinctLabels([
      ...members.map((m) => ({ scope: m.scope, label: m.label, fullName: m.def.subject })),
      ...lost.map((m, i) => ({ scope: m.scope, label: m.label, fullName: lostNames[i]! })),
    ]);
    all.forEach((m, i) => {
      m.label = labels[i]!;
    });
    return members.length || lost.length ? { link, members, lost } : null;
  }

  /** A member whose own link was rotated (replaced: a new one is live) or stopped; null when its subject is gone. */
  async #lostMember(
    schoolId: SchoolId,
    m: FamilyMember,
    since: string,
  ): Promise<{ member: LostMember; fullName: string } | null> {
    const def = await getFeedDef(this.#store, schoolId, m.scope, m.scopeId);
    if (!def) return null;
    const current = await this.#store.links.getFeedToken(schoolId, m.scope, m.scopeId);
    const replaced = !!current && current.revokedAt === null && current.tokenHash !== m.feedTokenHash;
    const member = { scope: m.scope, scopeId: m.scopeId, label: await this.#label(def), since, replaced };
    return { member, fullName: def.subject };
  }

  /** A child by first name (the family knows them), a team or activity by its name. */
  async #label(def: FeedDef): Promise<string> {
    if (def.scope !== 'student') return familyLabel(def.subject);
    const s = await this.#store.records.get(def.schoolId, 'students', def.scopeId);
    return familyLabel(s?.firstName.trim() || def.subject);
  }

  /**
   * The family's calendar now, or null when the link is unknown, revoked, or every member dropped out. Kept like
   * every feed's: rendered once per change of what it is made from (its members' renders, the children's labels,
   * the window), its bytes, ETag and Last-Modified in the store's rendered feeds, so a restart and every replica
   * answer with the same bytes and validators.
   */
  async get(token: string): Promise<FamilyFeed | null> {
    const hash = hashToken(token);
    try {
      // The rotation mark first: what this answer is confirmed under (a member rotated since clears it).
      const epoch = await this.#revocations?.confirm();
      const feed = await this.#get(token);
      if (!feed) this.#confirmed.delete(hash);
      else if (epoch !== undefined && epoch === this.#revocations?.epoch)
        this.#confirmed.set(hash, { epoch, feed });
      return feed;
    } catch (err) {
      if (!isStoreUnreachable(err)) throw err;
      // The store cannot be reached: the calendar this process last served for the link, as it was, as long as no
      // rotation became known since and the store was found unreachable under OUTAGE_MEMORY_MS ago; else 503.
      const known = this.#confirmed.get(hash);
      if (known && known.epoch === this.#revocations?.epoch && this.#revocations.answersFromMemory())
        return known.feed;
      throw new StoreUnreachableError(err);
    }
  }

  async #get(token: string): Promise<FamilyFeed | null> {
    const live = await this.#liveLink(token);
    if (!live) return null;
    const { link, members, lost } = live;
    const rendered = await Promise.all(
      members.map((m) => this.#feeds.get(link.schoolId, m.scope, m.scopeId)),
    );
    if (rendered.some((r) => r === null)) return null;
    const renders = rendered as RenderedFeed[];
    // A team's or activity's label is its feed's name as the feed's audience reads it (the gate's).
    members.forEach((m, i) => {
      if (m.scope !== 'student') m.label = familyLabel(renders[i]!.def.subject);
    });
    const labels = members.map((m) => m.label);
    const school = (await this.#store.records.listSchools()).find((s) => s.id === link.schoolId);
    const schoolName = school?.name ?? link.schoolId;
    const named = labels.length ? joinNames(labels) : joinNames(lost.map((m) => m.label));
    const shell: FamilyShell = {
      schoolId: link.schoolId,
      name: `${named} \u00b7 ${schoolName}`,
      description: `Sessions and fixtures for ${joinNames(labels) || 'nobody now'} at ${schoolName}.`,
      timeZone: school?.timeZone ?? 'UTC',
      members: members.map((m) => ({ scope: m.scope, scopeId: m.scopeId, label: m.label })),
      lost,
    };
    const w = this.#feeds.currentWindow();
    const inputs = createHash('sha256')
      .update(
        JSON.stringify([
          link.tokenHash,
          w.key,
          shell,
          members.map((m, i) => [m.scope, m.scopeId, renders[i]!.etag]),
        ]),
      )
      .digest('base64url');
    const hot = this.#cache.get(link.tokenHash);
    if (hot && hot.inputs === inputs) return hot.feed;
    const flight = `${link.tokenHash}|${inputs}`;
    const running = this.#inflight.get(flight);
    if (running) return running;
    const job = this.#storedOrRendered(link, members, renders, shell, inputs, w).finally(() =>
      this.#inflight.delete(flight),
    );
    this.#inflight.set(flight, job);
    return job;
  }

  /** The store's render when it was made from these inputs, else a new one, stored. */
  async #storedOrRendered(
    link: FamilyLink,
    members: LiveMember[],
    renders: RenderedFeed[],
    shell: FamilyShell,
    inputs: string,
    w: { from: Date; to: Date; key: string },
  ): Promise<FamilyFeed> {
    const key = { schoolId: link.schoolId, scope: 'family' as const, scopeId: familyFeedId(link.tokenHash) };
    const stored = await this.#store.feeds.getRenderedFeed(key.schoolId, key.scope, key.scopeId);
    if (stored && stored.inputs === inputs) {
      return this.#keep(link.tokenHash, inputs, {
        ...shell,
        body: await gunzipAsync(stored.gzip),
        gzip: stored.gzip,
        etag: stored.etag,
        lastModified: new Date(stored.lastModified),
        eventCount: stored.eventCount,
        upcoming: JSON.parse(stored.upcoming) as CalendarEvent[],
      });
    }
    const perMember: FamilyMemberEvents[] = [];
    for (const m of members) perMember.push({ label: m.label, events: await this.#feeds.eventsFor(m.def) });
    // SEQUENCE and LAST-MODIFIED as this family's calendar last published them, unless what it shows changed
    // (the children an event names included): the same bookkeeping as every feed's (event-versions.ts).
    const events = await versionFeedEvents(
      this.#store,
      key,
      familyEvents(link.tokenHash.slice(0, 16), perMember),
      this.#now(),
      (err) => this.#feeds.toldOfRequestWrite(err),
    );
    // One event per member that dropped out, saying so where the family looks (not in the page's list of sessions).
    const notices = lostNotices(link.tokenHash.slice(0, 16), shell.lost, shell.timeZone);
    const ics = renderIcs(
      { name: shell.name, description: shell.description, timeZone: shell.timeZone, window: w },
      [...events, ...notices],
      { maxBytes: DEFAULT_MAX_BYTES },
    );
    const body = Buffer.from(ics.body, 'utf8');
    const etag = etagOf(body);
    // Last-Modified moves only when the bytes do.
    const lastModified =
      stored && stored.etag === etag ? new Date(stored.lastModified) : httpInstant(this.#now());
    const nowIso = this.#now().toISOString();
    const feed: FamilyFeed = {
      ...shell,
      body,
      gzip: await gzipAsync(body, { level: 6 }),
      etag,
      lastModified,
      eventCount: ics.eventCount,
      upcoming: upcomingOf(events, this.#now()),
    };
    await this.#feeds.spare(() =>
      this.#store.feeds.saveRenderedFeed({
        ...key,
        dataVersion: renders[0]?.dataVersion ?? 0,
        windowKey: w.key,
        inputs,
        etag,
        lastModified: lastModified.toISOString(),
        gzip: feed.gzip,
        br: null,
        eventCount: ics.eventCount,
        trimmed: ics.trimmed,
        upcoming: JSON.stringify(feed.upcoming),
        def: JSON.stringify({ name: shell.name, description: shell.description, members: shell.members }),
        renderedAt: nowIso,
      }),
    );
    return this.#keep(link.tokenHash, inputs, feed);
  }

  #keep(tokenHash: string, inputs: string, feed: FamilyFeed): FamilyFeed {
    this.#cache.set(tokenHash, { inputs, feed });
    return feed;
  }
}
