// Feeds as last published: what each feed last published per session (feed-event-versions.ts), the rendered
// bytes with their validators (rendered-feeds.ts), and the installation's part of event UIDs.
import type { Id } from '../domain/types.ts';
import * as feedEventVersions from './feed-event-versions.ts';
import * as renderedFeeds from './rendered-feeds.ts';
import type { SqlContext } from './sql-context.ts';
import type {
  FeedScope,
  PublishedEvent,
  RenderedFeedRecord,
  RenderedFeedState,
  RenderedFeedsRepository,
  SchoolId,
  StoredFeedScope,
} from './types.ts';

export class SqlRenderedFeeds implements RenderedFeedsRepository {
  readonly #ctx: SqlContext;

  constructor(ctx: SqlContext) {
    this.#ctx = ctx;
  }

  async uidDomain(): Promise<string | null> {
    // Read once: it never changes. A read-only store not yet migrated has no table: its UIDs stay as they were.
    // Any other failure is not remembered (a UID domain taken for absent would change every UID).
    this.#uidDomain ??= this.#ctx.r
      .selectFrom('installation')
      .select('uid_domain')
      .where('id', '=', 1)
      .executeTakeFirst()
      .then(
        (row) => row?.uid_domain || null,
        (err: unknown) => {
          if (/no such table|does not exist/.test(String((err as Error)?.message))) return null;
          this.#uidDomain = undefined;
          throw err;
        },
      );
    return this.#uidDomain;
  }
  #uidDomain: Promise<string | null> | undefined;

  getFeedEventVersions(
    schoolId: SchoolId,
    scope: StoredFeedScope,
    scopeId: Id,
  ): Promise<Map<Id, PublishedEvent>> {
    return feedEventVersions.getFeedEventVersions(this.#ctx.r, schoolId, scope, scopeId);
  }
  saveFeedEventVersions(
    schoolId: SchoolId,
    scope: StoredFeedScope,
    scopeId: Id,
    versions: ReadonlyMap<Id, PublishedEvent>,
  ): Promise<void> {
    return feedEventVersions.saveFeedEventVersions(this.#ctx.w, schoolId, scope, scopeId, versions);
  }

  getRenderedFeed(
    schoolId: SchoolId,
    scope: StoredFeedScope,
    scopeId: Id,
  ): Promise<RenderedFeedRecord | null> {
    return renderedFeeds.getRenderedFeed(this.#ctx.r, schoolId, scope, scopeId);
  }
  listRenderedFeedStates(schoolId: SchoolId): Promise<RenderedFeedState[]> {
    return renderedFeeds.listRenderedFeedStates(this.#ctx.r, schoolId);
  }
  saveRenderedFeed(record: RenderedFeedRecord): Promise<void> {
    return renderedFeeds.saveRenderedFeed(this.#ctx.w, record);
  }
  saveRenderedFeedBrotli(
    schoolId: SchoolId,
    scope: StoredFeedScope,
    scopeId: Id,
    etag: string,
    br: Buffer,
  ): Promise<void> {
    return renderedFeeds.saveRenderedFeedBrotli(this.#ctx.w, schoolId, scope, scopeId, etag, br);
  }
  markRenderedFeedsCurrent(
    schoolId: SchoolId,
    feeds: readonly { scope: FeedScope; scopeId: Id; inputs: string }[],
    dataVersion: number,
  ): Promise<void> {
    if (feeds.length === 0) return Promise.resolve();
    return this.#ctx.transaction(() =>
      renderedFeeds.markRenderedFeedsCurrent(this.#ctx.w, schoolId, feeds, dataVersion),
    );
  }
  deleteRenderedFeeds(
    schoolId: SchoolId,
    feeds: readonly { scope: StoredFeedScope; scopeId: Id }[],
  ): Promise<void> {
    if (feeds.length === 0) return Promise.resolve();
    return this.#ctx.transaction(() => renderedFeeds.deleteRenderedFeeds(this.#ctx.w, schoolId, feeds));
  }
  async renderPassMark(schoolId: SchoolId): Promise<string | null> {
    const row = await this.#ctx.r
      .selectFrom('render_passes')
      .select('mark')
      .where('school_id', '=', schoolId)
      .executeTakeFirst();
    return row?.mark ?? null;
  }
  async saveRenderPassMark(schoolId: SchoolId, mark: string): Promise<void> {
    const at = new Date().toISOString();
    await this.#ctx.w
      .insertInto('render_passes')
      .values({ school_id: schoolId, mark, at })
      .onConflict((oc) => oc.column('school_id').doUpdateSet({ mark, at }))
      .execute();
  }
}
