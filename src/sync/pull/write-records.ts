// The store side of a resource's turn, first step: its new and changed records, in bulk statements.
import type { SchoolConfig } from '../../config.ts';
import type { ResourceKind, RunCounts, Store } from '../../store/types.ts';
import type { ResourceSpec } from '../resources.ts';
import type { Gathered } from './gathered.ts';
import { zeroCounts } from './types.ts';

/** Records per bulk write inside a resource's transaction, and their text (a session: ~1 KB; a team: several). */
const WRITE_CHUNK = { records: 2_000, chars: 2_000_000 };

export interface Written {
  /** The resource's counts so far: added, changed, unchanged (deletions come later), skipped. */
  counts: RunCounts;
  /** Custom-field metadata arrives with sessions and is stored as its own kind. */
  extra?: { kind: ResourceKind; counts: RunCounts };
}

export async function writeRecords(
  tx: Pick<Store, 'records'>,
  school: SchoolConfig,
  spec: ResourceSpec,
  got: Gathered,
  base: { skipped: number; at: string },
): Promise<Written> {
  const counts = zeroCounts();
  counts.skipped = base.skipped;
  counts.unchanged += got.unchanged;
  for await (const chunk of got.records.chunks(WRITE_CHUNK.records, WRITE_CHUNK.chars)) {
    const stats = await tx.records.upsertPrepared(school.id, spec.kind, chunk, base.at);
    counts.added += stats.added + stats.restored;
    counts.changed += stats.changed;
    counts.unchanged += stats.unchanged;
  }
  if (got.customFields.size === 0 && got.customFieldsUnchanged === 0) return { counts };
  const cf = zeroCounts();
  cf.unchanged = got.customFieldsUnchanged;
  if (got.customFields.size > 0) {
    const stats = await tx.records.upsert(school.id, 'customFields', [...got.customFields.values()], base.at);
    cf.added = stats.added + stats.restored;
    cf.changed = stats.changed;
    cf.unchanged += stats.unchanged;
  }
  return { counts, extra: { kind: 'customFields', counts: cf } };
}
