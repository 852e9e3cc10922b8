// The feed rotation record: which feed secret it vouches for, and every rotation made with it. Tokens derive from
// (secret, school, scope, id, version), so knowing the secret and each feed's current version is knowing every
// live URL; a secret with no record beside it may be one whose URLs were rotated, and nobody can tell which.
//
// The record is kept twice:
// - in the store (`feed_rotation_record` + `feed_rotations`): shared by every replica on the same database;
// - in each process's DATA_DIR (`feed-rotations.jsonl`, append-only, fsynced): what survives losing the database
//   (lost, restored from an older backup, a move to a new PostgreSQL). A rotation commits in the store (one
//   transaction with its revocation, new token and audit record), then goes to the file: the file never holds a
//   rotation the store refused, so a rotation that reported failure (a full disk) is never applied by a later
//   start; every replica mirrors the store's record into its own file (at start, every few seconds, when it
//   stops), which also brings in a rotation whose own process could not write its file.
//
// At start reconcileRotations() decides whether the secret is vouched for, and brings both copies together:
// - the store's record or the file vouches for this secret (its fingerprint; a file from before fingerprints
//   vouches for the secret beside it): rotations either copy lacks are added to it, tokens the store lost are
//   issued again at their recorded version (a rotated URL stays dead, the current one works);
// - the secret was made just now (no URL can exist yet): both records start empty;
// - neither: the secret may have made URLs that were rotated since, and nothing says which. No feed is served
//   (503, never 404) until an operator decides: restores a record, or runs `rostercal feeds accept-store`.
import { createHmac, randomUUID } from 'node:crypto';
import {
  appendFileSync,
  closeSync,
  existsSync,
  fsyncSync,
  openSync,
  readFileSync,
  renameSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import type { Id } from '../domain/types.ts';
import { ensurePrivateDir, ensurePrivateFile, PRIVATE_FILE_MODE } from '../private-files.ts';
import type { FeedRotationRow, FeedScope, SchoolId, Store } from '../store/types.ts';

export const ROTATIONS_FILE = 'feed-rotations.jsonl';
/**
 * A backup's copy of the record: named apart so that a backup copied into DATA_DIR by hand vouches for nothing
 * (it knows only the rotations made before it); `rostercal restore` merges it with the newest record there is.
 */
export const BACKUP_ROTATIONS_FILE = 'feed-rotations.at-backup.jsonl';

export type Rotation = FeedRotationRow;

/** What names a feed secret in a rotation record: an HMAC of a constant, which reveals nothing of the secret. */
export function secretFingerprint(secret: Buffer): string {
  return createHmac('sha256', secret).update('rostercal feed rotation record v1').digest('hex').slice(0, 32);
}

export const rotationKey = (school: SchoolId, scope: FeedScope, id: Id) => `${school}|${scope}|${id}`;

/** The highest version per feed. */
export function latestVersions(rows: readonly Rotation[]): Map<string, Rotation> {
  const out = new Map<string, Rotation>();
  for (const r of rows) {
    const k = rotationKey(r.school, r.scope, r.id);
    if ((out.get(k)?.version ?? 0) < r.version) out.set(k, r);
  }
  return out;
}

export interface JournalContents {
  id: string;
  /** The fingerprint of the secret it vouches for; null in a file written before fingerprints. */
  secret: string | null;
  rotations: Map<string, Rotation>;
}

/** The file copy of the record (DATA_DIR/feed-rotations.jsonl). */
export class RotationJournal {
  readonly file: string;

  /** `name`: another file of the same form (a backup's copy, one an operator names). */
  constructor(dataDir: string, name: string = ROTATIONS_FILE) {
    this.file = path.resolve(dataDir, name);
  }

  exists(): boolean {
    return existsSync(this.file);
  }

  /** Throws naming the file when damaged. */
  read(): JournalContents {
    ensurePrivateFile(this.file);
    const lines = readFileSync(this.file, 'utf8').split('\n');
    let id: string | null = null;
    let secret: string | null = null;
    const rows: Rotation[] = [];
    lines.forEach((line, i) => {
      if (!line.trim()) return;
      let rec: Partial<Rotation> & { journal?: string; secret?: string };
      try {
        rec = JSON.parse(line);
      } catch {
        // A torn last line (power cut mid-append) carries no completed rotation: the store write came after it.
        if (lines.slice(i + 1).every((l) => !l.trim())) return;
        throw new Error(`${this.file}: line ${i + 1} is not a rotation record`);
      }
      if (typeof rec.journal === 'string') {
        id ??= rec.journal;
        if (typeof rec.secret === 'string') secret ??= rec.secret;
        return;
      }
      if (typeof rec.secret === 'string' && rec.school === undefined) {
        secret ??= rec.secret;
        return;
      }
      if (typeof rec.school !== 'string' || typeof rec.scope !== 'string' || !Number.isInteger(rec.version))
        throw new Error(`${this.file}: line ${i + 1} is not a rotation record`);
      rows.push({
        school: rec.school,
        scope: rec.scope as FeedScope,
        id: Number(rec.id),
        version: rec.version as number,
        at: typeof rec.at === 'string' ? rec.at : '',
      });
    });
    if (!id) throw new Error(`${this.file}: no header line`);
    return { id, secret, rotations: latestVersions(rows) };
  }

  /** Creates the file (0600, in a 0700 directory) for this secret; a file of another secret is kept aside. */
  create(secret: string): void {
    ensurePrivateDir(path.dirname(this.file));
    if (this.exists())
      renameSync(this.file, `${this.file}.${new Date().toISOString().replace(/[:.]/g, '-')}.old`);
    const fd = openSync(this.file, 'wx', PRIVATE_FILE_MODE);
    try {
      writeSync(
        fd,
        `${JSON.stringify({ journal: randomUUID(), created: new Date().toISOString(), secret })}\n`,
      );
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }

  /** A file from before fingerprints: it vouches for the secret beside it from now on. */
  claim(secret: string): void {
    this.#append(`${JSON.stringify({ secret })}\n`);
  }

  /** Appends rotations durably (fsync), once the store has committed them (FeedTokens.rotate). */
  append(rotations: readonly Rotation[]): void {
    if (rotations.length === 0) return;
    this.#append(rotations.map((r) => `${JSON.stringify(r)}\n`).join(''));
  }

  #append(text: string): void {
    appendFileSync(this.file, text, { mode: PRIVATE_FILE_MODE });
    const fd = openSync(this.file, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }

  version(school: SchoolId, scope: FeedScope, id: Id): number {
    if (!this.exists()) return 0;
    return this.read().rotations.get(rotationKey(school, scope, id))?.version ?? 0;
  }
}

export interface RotationState {
  /** Schools whose current URLs cannot be told: their feeds are not served. */
  unsure: Map<SchoolId, string>;
  /** Schools whose store had lost feed tokens the record vouches for: issue every feed's token after a pull. */
  reissue: Set<SchoolId>;
  /** Lines for the operator (what was repaired). */
  notes: string[];
  /** Reconciling itself failed: the schools stay unsure until a restart reconciles (no recheck clears them). */
  stuck?: boolean;
}

/** What `issue` must do: save a live token of that version, revoking older ones. */
export type IssueVersion = (school: SchoolId, scope: FeedScope, id: Id, version: number) => Promise<void>;

/** Why no feed is served while no record vouches for the secret: for the start-up message, /readyz and the CLI. */
export function unvouchedReason(secretSource: string, file: string): string {
  return `no feed rotation record vouches for ${secretSource}: neither the database nor ${file} holds one, so rostercal cannot tell which feed URLs were rotated (revoked). No feed is served (503, try again later) until an operator decides: restore a backup with \`rostercal restore\` (a backup copied by hand vouches for nothing: it cannot know rotations made after it), restore ${file}, or run \`rostercal feeds accept-store\` (a new FEED_SECRET first changes every URL, so none that was rotated can come back; with this secret, URLs rotated since the lost record work again)`;
}

/** Does a record of the store or of the file vouch for the secret with this fingerprint? */
export async function vouched(
  store: Pick<Store, 'links'>,
  journal: RotationJournal,
  secret: string,
): Promise<boolean> {
  if ((await store.links.getFeedRotationRecord())?.secret === secret) return true;
  if (!journal.exists()) return false;
  const file = journal.read().secret;
  return file === null || file === secret;
}

/**
 * Makes both copies of the record hold every rotation either knows (and the store's tokens agree); rotations the
 * store already knew from its tokens alone (made before it kept a record) join the record too. Returns the
 * rotations the store's tokens lacked, per school.
 */
export async function mergeRecords(
  store: Pick<Store, 'links'>,
  journal: RotationJournal,
  secret: string,
): Promise<{ storeLacked: Rotation[] }> {
  if ((await store.links.getFeedRotationRecord())?.secret !== secret)
    await store.links.startFeedRotationRecord(secret, new Date().toISOString());
  if (!journal.exists()) journal.create(secret);
  let file = journal.read();
  if (file.secret === null) journal.claim(secret);
  else if (file.secret !== secret) {
    journal.create(secret);
    file = journal.read();
  }
  const now = new Date().toISOString();
  const inStore = latestVersions(await store.links.listFeedRotations());
  const tokenVersions = new Map<string, Rotation>();
  for (const t of await store.links.listFeedTokens()) {
    const k = rotationKey(t.schoolId, t.scope, t.scopeId);
    if ((tokenVersions.get(k)?.version ?? 0) < t.version)
      tokenVersions.set(k, {
        school: t.schoolId,
        scope: t.scope,
        id: t.scopeId,
        version: t.version,
        at: now,
      });
  }
  const storeKnows = new Map(inStore);
  for (const [k, r] of tokenVersions)
    if (r.version > 1 && (storeKnows.get(k)?.version ?? 1) < r.version) storeKnows.set(k, r);
  const toStore: Rotation[] = [];
  for (const [k, r] of storeKnows) if ((inStore.get(k)?.version ?? 1) < r.version) toStore.push(r);
  for (const [k, r] of file.rotations) if ((storeKnows.get(k)?.version ?? 1) < r.version) toStore.push(r);
  const toFile: Rotation[] = [];
  for (const [k, r] of storeKnows) if ((file.rotations.get(k)?.version ?? 1) < r.version) toFile.push(r);
  journal.append(toFile);
  if (toStore.length) await store.links.addFeedRotations(toStore);
  const storeLacked = [...file.rotations.entries()]
    .filter(([k, r]) => (tokenVersions.get(k)?.version ?? 0) < r.version)
    .map(([, r]) => r);
  return { storeLacked };
}

/** Decides whether the secret is vouched for and brings the store and the file into agreement (top of file). */
export async function reconcileRotations(opts: {
  store: Pick<Store, 'links'>;
  journal: RotationJournal;
  schools: SchoolId[];
  /** The secret's fingerprint (secretFingerprint). */
  secret: string;
  /** Where the secret comes from, as an operator names it (FEED_SECRET or the file). */
  secretSource: string;
  /** The secret was created by this start: no URL of it can exist yet. */
  newSecret: boolean;
  issue: IssueVersion;
}): Promise<RotationState> {
  const { store, journal, schools } = opts;
  const state: RotationState = { unsure: new Map(), reissue: new Set(), notes: [] };
  if (!opts.newSecret && !(await vouched(store, journal, opts.secret))) {
    const why = unvouchedReason(opts.secretSource, journal.file);
    const withTokens = new Set((await store.links.listFeedTokens()).map((t) => t.schoolId));
    for (const s of schools) {
      state.unsure.set(s, why);
      // Once an operator decides, the next pull issues what a lost store forgot.
      if (!withTokens.has(s)) state.reissue.add(s);
    }
    return state;
  }
  const hadTokens = new Set((await store.links.listFeedTokens()).map((t) => t.schoolId));
  const { storeLacked } = await mergeRecords(store, journal, opts.secret);
  for (const school of schools) {
    const lacked = storeLacked.filter((r) => r.school === school);
    for (const r of lacked) await opts.issue(school, r.scope, r.id, r.version);
    if (lacked.length)
      state.notes.push(
        `${school}: the database did not know ${lacked.length} feed rotation(s) recorded in ${journal.file}; the rotated URLs stay dead and the current ones work again`,
      );
    // A store with no token of a school the record vouches for lost them (or the school is new, when issuing
    // early is harmless): every feed's token is issued again once a pull has brought the school back, so URLs
    // that were never rotated keep working.
    if (!hadTokens.has(school) && !opts.newSecret) state.reissue.add(school);
  }
  return state;
}

/**
 * Copies into the file the rotations the store's record holds and the file lacks (a rotation made on another
 * replica), so that this DATA_DIR keeps them when the database is lost. Cheap when nothing changed: one read of
 * the store's mark.
 */
export class RecordMirror {
  readonly #store: Pick<Store, 'links'>;
  readonly #journal: RotationJournal;
  readonly #secret: string;
  #mark = -1;

  constructor(store: Pick<Store, 'links'>, journal: RotationJournal, secret: string) {
    this.#store = store;
    this.#journal = journal;
    this.#secret = secret;
  }

  async sync(): Promise<void> {
    const mark = await this.#store.links.feedRotationsMark();
    if (mark === this.#mark && this.#journal.exists()) return;
    if ((await this.#store.links.getFeedRotationRecord())?.secret !== this.#secret) return;
    if (!this.#journal.exists()) this.#journal.create(this.#secret);
    let file = this.#journal.read();
    if (file.secret !== null && file.secret !== this.#secret) {
      this.#journal.create(this.#secret);
      file = this.#journal.read();
    }
    const missing = [...latestVersions(await this.#store.links.listFeedRotations()).entries()]
      .filter(([k, r]) => (file.rotations.get(k)?.version ?? 1) < r.version)
      .map(([, r]) => r);
    this.#journal.append(missing);
    this.#mark = mark;
  }
}
