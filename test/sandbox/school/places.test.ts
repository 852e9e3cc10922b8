// The generated school's places (src/sandbox/school/places.ts), on the real generator's 'school' scale: home venues
// owned by the school with one archived, one association venue per opponent owned by it, and every session held
// where it should be: at a live home venue, or an away fixture on its opponent's ground.
import { describe, expect, it } from 'vitest';
import { generateSchool } from '../../../src/sandbox/generate.ts';
import { TEST_NOW } from '../../support/clock.ts';

const school = generateSchool(3, 'school', TEST_NOW);
const own = school.organisations[0]!;
const locations = new Map(school.locations.map((l) => [l.id, l]));
const orgs = new Map(school.organisations.map((o) => [o.id, o]));

describe("the generated school's places", () => {
  it("has the school's home venues, one archived, and one association venue per opponent", () => {
    const home = school.locations.filter((l) => !l.association);
    expect(home.every((l) => l.ownerId === own.id)).toBe(true);
    expect(home.filter((l) => l.archived)).toHaveLength(1);
    const away = school.locations.filter((l) => l.association);
    expect(away.map((l) => l.ownerId).sort()).toEqual(
      school.organisations
        .slice(1)
        .map((o) => o.id)
        .sort(),
    );
    expect(away.every((l) => !l.archived && l.id >= 501)).toBe(true);
    expect(new Set(school.locations.map((l) => l.id)).size).toBe(school.locations.length);
  });

  it('holds each session at a live home venue, or an away fixture on its opponent’s ground', () => {
    let away = 0;
    for (const s of school.sessions) {
      if (s.locationId === null) continue;
      const l = locations.get(s.locationId)!;
      expect(l, `session ${s.id}`).toBeDefined();
      expect(l.archived, `session ${s.id}`).toBe(false);
      if (l.association) {
        away++;
        expect(s.scored, `session ${s.id}`).toBe(true);
        expect(orgs.get(l.ownerId)?.name, `session ${s.id}`).toBe(s.opponentOrganisation);
      } else expect(l.ownerId).toBe(own.id);
    }
    expect(away).toBeGreaterThan(10);
  });
});
