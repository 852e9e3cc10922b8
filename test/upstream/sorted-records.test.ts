// Every record the pull stores is built with its keys in sorted order (src/upstream/normalise.ts), so its stable
// JSON is the engine's own JSON.stringify (src/util/stable-json.ts). Out of order costs only speed, never
// correctness; this test is what notices, naming the kind and the first key out of place.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Team } from '../../src/domain/types.ts';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import { withoutSensitive } from '../../src/sync/pull.ts';
import { RESOURCES } from '../../src/sync/resources.ts';
import type { UpstreamClient } from '../../src/upstream/api.ts';
import { stableStringify } from '../../src/util/stable-json.ts';
import { clientOf, NOW } from './sandbox-helpers.ts';

let sb: Sandbox;
let client: UpstreamClient;

beforeAll(async () => {
  sb = await startSandbox({ port: 0, seed: 3, scale: 'small', now: NOW });
  client = clientOf(sb);
});
afterAll(() => sb.close());

/** The path to the first object whose keys are out of sorted order, or null. */
function unsortedAt(value: unknown, path: string): string | null {
  if (value === null || typeof value !== 'object') return null;
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) {
      const at = unsortedAt(v, `${path}[${i}]`);
      if (at) return at;
    }
    return null;
  }
  const keys = Object.keys(value);
  const sorted = [...keys].sort();
  const i = keys.findIndex((k, j) => k !== sorted[j]);
  if (i >= 0) return `${path}.${keys[i]} (keys ${keys.join(', ')})`;
  for (const k of keys) {
    const at = unsortedAt((value as Record<string, unknown>)[k], `${path}.${k}`);
    if (at) return at;
  }
  return null;
}

describe('stored records are built in sorted key order', () => {
  it('holds for every record of every kind the pull reads, as it stores them', async () => {
    const window = { from: '2025-01-01T00:00:00.000Z', to: '2028-01-01T00:00:00.000Z' };
    const seen = new Set<string>();
    for (const spec of RESOURCES) {
      for (const listing of spec.listings) {
        for await (const page of listing.pages({ client, window })) {
          expect(page.skipped).toEqual([]);
          for (const got of page.records) {
            const record = listing.adjust ? listing.adjust(got) : got;
            // Both ways a team is kept: as read (sensitive rosters on) and stripped (off).
            if (spec.kind === 'teams') {
              expect(unsortedAt(withoutSensitive(record as Team), 'teams')).toBeNull();
            }
            expect(unsortedAt(record, spec.kind)).toBeNull();
            expect(JSON.stringify(record)).toBe(stableStringify(record));
            seen.add(spec.kind);
          }
          for (const meta of page.customFieldsMetadata ?? []) {
            expect(unsortedAt(meta, 'customFields')).toBeNull();
          }
        }
      }
    }
    expect([...seen].sort()).toEqual(RESOURCES.map((r) => r.kind).sort());
  });

  it('holds for a team read singly, with guardians and medical conditions', async () => {
    let checked = 0;
    for await (const page of client.teams({ includeStudents: true })) {
      for (const listed of page.records.slice(0, 10)) {
        const team = await client.team(listed.id);
        expect(unsortedAt(team, 'team')).toBeNull();
        if (team.students.some((m) => m.guardians.length > 0 && m.medicalConditions.length > 0)) checked++;
      }
      break;
    }
    expect(checked).toBeGreaterThan(0);
  });
});
