// rostercal feeds list [--json] [--school ID]
// rostercal feeds rotate SCOPE ID [--school ID]
// rostercal feeds accept-store
import type { Config } from '../config.ts';
import { listFeedDefs } from '../feeds/feed-defs.ts';
import { mergeRecords, RotationJournal, secretFingerprint, vouched } from '../feeds/rotations.ts';
import {
  FEED_SCOPES,
  FeedSecretError,
  FeedTokens,
  feedSecretSource,
  isFeedScope,
  loadFeedSecret,
  type RotatedFeed,
  RotationFailedError,
  untilEveryServerKnows,
} from '../feeds/tokens.ts';
import { prepareFeedTokens } from '../feeds/trust.ts';
import { auditCommandLine } from '../identity/command-line-audit.ts';
import { type ClosedLiveCalendar, closeLiveGoogleCalendars, describeClosed } from '../push/live-rotation.ts';
import type { FeedScope, Store } from '../store/types.ts';
import { columns, printError, printJson, printLines } from '../terminal.ts';
import { defineCommand, EXIT, idOption, UsageError, withStore } from './command.ts';

const USAGE = `usage:
  rostercal feeds list [--json] [--school ID]     every feed: scope, id, name, URL (issues missing tokens)
  rostercal feeds rotate SCOPE ID [--school ID]   new URL for one feed; the old one has stopped working on
                                                  every running server when the command returns
  rostercal feeds accept-store                    no rotation record vouches for the feed secret (a new
                                                  FEED_SECRET, or both records lost): trust the database's
                                                  feed versions as current and start the record from them

SCOPE is one of ${FEED_SCOPES.join(', ')}. The store and PUBLIC_URL come from the usual configuration
(ROSTERCAL_CONFIG / DATA_DIR / DATABASE_URL / PUBLIC_URL); tokens derive from FEED_SECRET or DATA_DIR/feed-secret,
and every rotation is recorded in the database and in DATA_DIR/feed-rotations.jsonl (back up the secret with
either).`;

export interface FeedListing {
  school: string;
  scope: string;
  id: number;
  name: string;
  calendarName: string;
  /** null when the token was issued under another secret (rotate to get a printable URL). */
  url: string | null;
  page: string | null;
}

export function feedUrls(publicUrl: string, token: string): { url: string; page: string } {
  const base = publicUrl.replace(/\/+$/, '');
  return { url: `${base}/feeds/${token}.ics`, page: `${base}/feeds/${token}` };
}

/** Every feed of the given schools (all when none given), issuing tokens for feeds that have none. */
export async function listFeeds(
  store: Pick<Store, 'records'>,
  tokens: FeedTokens,
  publicUrl: string,
  schoolIds?: string[],
): Promise<FeedListing[]> {
  const schools = schoolIds ?? (await store.records.listSchools()).map((s) => s.id);
  const out: FeedListing[] = [];
  for (const schoolId of schools) {
    const defs = await listFeedDefs(store, schoolId);
    const issuedAll = await tokens.ensureAll(schoolId, defs);
    for (const [i, def] of defs.entries()) {
      const issued = issuedAll[i]!;
      const links = issued.token ? feedUrls(publicUrl, issued.token) : null;
      out.push({
        school: schoolId,
        scope: def.scope,
        id: def.scopeId,
        name: def.subject,
        calendarName: def.calendarName,
        url: links?.url ?? null,
        page: links?.page ?? null,
      });
    }
  }
  return out;
}

function table(rows: FeedListing[]): string[] {
  // The page, not the .ics: it is what families open (subscribe buttons for their device, a QR code); the
  // calendar's own URL is the page's plus .ics, and --json gives both.
  return columns(
    ['SCHOOL', 'SCOPE', 'ID', 'NAME', 'PAGE TO SEND (calendar: add .ics)'],
    rows.map((r) => [
      r.school,
      r.scope,
      String(r.id),
      r.name,
      r.page ?? '(issued under another secret: rotate)',
    ]),
  );
}

/** The school to act on: --school, else the only school the store holds. */
async function pickSchool(store: Pick<Store, 'records'>, asked: string | undefined): Promise<string> {
  const known = (await store.records.listSchools()).map((s) => s.id);
  if (asked) {
    if (!known.includes(asked)) {
      throw new Error(
        `--school ${asked}: no such school in the store (known: ${known.join(', ') || 'none yet'})`,
      );
    }
    return asked;
  }
  if (known.length === 1) return known[0]!;
  if (known.length === 0) throw new Error('the store holds no school yet: run `rostercal sync` first');
  throw new Error(`several schools: name one with --school (${known.join(', ')})`);
}

/** `rotate SCOPE ID`'s words, or the usage error they make. */
function rotateArgs(rest: readonly string[]): { scope: FeedScope; id: number } {
  const [scope, idText, ...extra] = rest;
  if (!scope || !idText || extra.length || !isFeedScope(scope))
    throw new UsageError(`rotate: need SCOPE (${FEED_SCOPES.join('|')}) and a numeric ID`);
  return { scope, id: idOption('ID', idText, 'feed')! };
}

export const run = defineCommand({
  name: 'feeds',
  usage: USAGE,
  options: { json: { type: 'boolean' }, school: { type: 'string' } },
  positionals: true,
  async run({ values, positionals, config: loadConfig }) {
    const [sub, ...rest] = positionals;
    if (sub === undefined) throw new UsageError('say what to do: list, rotate or accept-store');
    if (sub !== 'list' && sub !== 'rotate' && sub !== 'accept-store')
      throw new UsageError(`unknown subcommand ${sub}`);
    // The words first, the configuration after: a mistake in the command is said alone, before any warning of it.
    if (sub !== 'rotate' && rest.length) throw new UsageError(`${sub}: unexpected ${rest.join(' ')}`);
    const rotation = sub === 'rotate' ? rotateArgs(rest) : null;
    const config = await loadConfig();
    // Outside the demo the configuration already warned about a missing PUBLIC_URL; the demo's URLs are only
    // right while `serve` listens on the same PORT as this command sees.
    if (sub !== 'accept-store' && !config.publicUrlGiven && config.source.kind === 'demo')
      printError(
        `rostercal feeds: warning: PUBLIC_URL is not set: these URLs use ${config.publicUrl}, which work only on this machine and only while \`rostercal serve\` listens on port ${config.port}. Run this command with the PORT serve uses, or set PUBLIC_URL to the address families and staff use`,
      );
    if (sub === 'accept-store') return withStore(config, (store) => acceptStore(config, store));
    /** Tokens with the secret checked and the rotation record reconciled; null (after saying why) when unsure. */
    const prepare = async (
      store: Pick<Store, 'links' | 'transaction'>,
      schoolIds: string[],
    ): Promise<FeedTokens | null> => {
      const p = await prepareFeedTokens({
        store,
        dataDir: config.dataDir,
        secret: config.feedSecret,
        schools: schoolIds,
      });
      for (const line of p.notes) printError(`rostercal feeds: ${line}`);
      const unsure = schoolIds.filter((s) => p.guard.unsure.has(s));
      for (const s of unsure) printError(`rostercal feeds: ${s}: ${p.guard.unsure.get(s)}`);
      return unsure.length ? null : p.tokens;
    };
    if (sub === 'list') {
      return withStore(config, async (store) => {
        const schoolIds = values.school ? [await pickSchool(store, values.school)] : undefined;
        const tokens = await prepare(
          store,
          schoolIds ?? (await store.records.listSchools()).map((s) => s.id),
        );
        if (!tokens) return EXIT.failure;
        const rows = await listFeeds(store, tokens, config.publicUrl, schoolIds);
        if (values.json) printJson(rows);
        else if (rows.length === 0) printLines('No feeds yet: run `rostercal sync` first.');
        else printLines(table(rows));
        return EXIT.ok;
      });
    }
    const { scope, id } = rotation ?? rotateArgs(rest);
    return withStore(config, async (store) => {
      const schoolId = await pickSchool(store, values.school);
      const def = (await listFeedDefs(store, schoolId)).find((d) => d.scope === scope && d.scopeId === id);
      if (!def) {
        printError(`rostercal feeds rotate: school ${schoolId} has no ${scope} feed with id ${id}`);
        return EXIT.failure;
      }
      const tokens = await prepare(store, [schoolId]);
      if (!tokens) return EXIT.failure;
      // All or nothing: the act's audit record commits with the rotation (tokens.ts), or neither does; a failure
      // here leaves the old URL working for ever.
      let issued: RotatedFeed;
      try {
        issued = await tokens.rotate(schoolId, scope, id, {
          alsoInTransaction: (tx, version) =>
            auditCommandLine(tx, {
              action: 'feed-rotate',
              schoolId,
              teamId: scope === 'team' ? id : null,
              detail: `${scope} ${id} (${def.subject}) → version ${version}`,
            }),
        });
      } catch (err) {
        if (!(err instanceof RotationFailedError)) throw err;
        printError(`rostercal feeds rotate: ${err.message}`);
        return EXIT.failure;
      }
      // The rotation has taken effect: what follows can fail only with a warning, never turn it into a failure.
      if (issued.unrecorded)
        printError(
          `rostercal feeds rotate: warning: the rotation is in the database but not in this DATA_DIR's record (${issued.unrecorded}); running servers copy it into their own within seconds`,
        );
      const school = config.schools.find((s) => s.id === schoolId);
      const live = school
        ? await afterRotation(() => closeLiveGoogleCalendars(store, school, scope, id))
        : [];
      const liveText = describeClosed(live ?? []);
      // Running servers remember live tokens for a moment: by the time this says so, none answers the old URL.
      await untilEveryServerKnows();
      if (liveText)
        await afterRotation(() =>
          auditCommandLine(store, {
            action: 'feed-rotate',
            schoolId,
            teamId: scope === 'team' ? id : null,
            detail: `${scope} ${id} (${def.subject}): ${liveText}`,
          }),
        );
      printRotated(
        config.publicUrl,
        { schoolId, scope, id, def, issued, live: live ?? [] },
        Boolean(values.json),
      );
      return EXIT.ok;
    });
  },
});

/** A step after a rotation took effect: its failure is a warning (the rotation stands), and its result null. */
async function afterRotation<T>(step: () => Promise<T>): Promise<T | null> {
  try {
    return await step();
  } catch (err) {
    printError(`rostercal feeds rotate: warning: the rotation took effect, but ${(err as Error).message}`);
    return null;
  }
}

function printRotated(
  publicUrl: string,
  r: {
    schoolId: string;
    scope: string;
    id: number;
    def: { subject: string; calendarName: string };
    issued: { token: string | null; record: { version: number } };
    live: ClosedLiveCalendar[];
  },
  json: boolean,
): void {
  const links = feedUrls(publicUrl, r.issued.token ?? '');
  if (json) {
    printJson({
      school: r.schoolId,
      scope: r.scope,
      id: r.id,
      name: r.def.subject,
      version: r.issued.record.version,
      ...links,
      liveGoogleCalendars: r.live,
    });
    return;
  }
  printLines([
    `${r.def.calendarName}: new URL (version ${r.issued.record.version}); the previous URL no longer works: everyone subscribed must subscribe again.`,
    `page to send them: ${links.page}`,
    `calendar (.ics):   ${links.url}`,
    ...r.live.map(
      (c) =>
        `live Google calendar (${c.target}): ${c.calendarId === null ? 'none made yet' : c.closed ? `${c.calendarId} is no longer public` : `${c.calendarId} could not be closed now (${c.error}); the next push closes it first`}; the next push makes a new one, offered on the page: families who added the live Google calendar must add it again.`,
    ),
  ]);
}

/**
 * No rotation record vouches for the feed secret (a new FEED_SECRET, or the database and the file both lost):
 * the operator vouches for the database as it is, and the record starts from what it holds.
 */
async function acceptStore(
  config: Config,
  store: Pick<Store, 'records' | 'links' | 'access' | 'transaction'>,
): Promise<number> {
  const journal = new RotationJournal(config.dataDir);
  const source = feedSecretSource({ secret: config.feedSecret, dataDir: config.dataDir });
  // The secret must be the one the database's URLs were made with.
  const secret = loadFeedSecret({ secret: config.feedSecret, dataDir: config.dataDir, create: false });
  const { foreign, live } = await new FeedTokens(store, secret).foreignTokens();
  if (foreign > 0)
    throw new FeedSecretError(
      `${source} did not make ${foreign} of the ${live} live feed URLs in the database`,
      feedSecretSource({ dataDir: config.dataDir }),
    );
  const fingerprint = secretFingerprint(secret);
  if (await vouched(store, journal, fingerprint)) {
    printLines(
      `Nothing to accept: a feed rotation record already vouches for ${source} (the database's, or ${journal.file}).`,
    );
    return EXIT.ok;
  }
  await store.links.startFeedRotationRecord(fingerprint, new Date().toISOString());
  await mergeRecords(store, journal, fingerprint);
  const rotated = (await store.links.listFeedRotations()).length;
  const schools = await store.records.listSchools();
  for (const s of schools)
    await auditCommandLine(store, {
      action: 'feeds-accept-store',
      schoolId: s.id,
      teamId: null,
      detail: `the database's feed versions accepted as current (${rotated} rotation(s))`,
    });
  printLines(
    `Accepted the database's feed versions as current (${rotated} rotated feed(s)); the rotation record for ${source} is now in the database and in ${journal.file}. Back up the secret with either. Running servers serve feeds again within a few seconds.`,
  );
  return EXIT.ok;
}
