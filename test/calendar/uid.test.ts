// Event UIDs (calendar/uid.ts): stable, carrying the feed scope, named by school and installation, with only
// characters every parser accepts; a store that published before installations keeps `<school>.rostercal`.
import { describe, expect, it } from 'vitest';
import { eventUid, uidDomain } from '../../src/calendar/uid.ts';

describe('event UIDs', () => {
  it('carry the scope, the school and the installation', () => {
    const school = { id: 'hill', uidDomain: 'a1b2c3d4e5f6' };
    expect(eventUid(school, 42, { scope: 'team', id: 7 })).toBe(
      'session-42-team-7@hill.a1b2c3d4e5f6.rostercal',
    );
    expect(eventUid(school, 42)).toBe('session-42@hill.a1b2c3d4e5f6.rostercal');
    expect(eventUid(school, 42, { scope: 'team', id: 7 })).toBe(
      eventUid(school, 42, { scope: 'team', id: 7 }),
    );
  });

  it('keep `<school>.rostercal` where the installation part is empty', () => {
    expect(uidDomain({ id: 'hill', uidDomain: '' })).toBe('hill.rostercal');
    expect(uidDomain({ id: 'hill' })).toBe('hill.rostercal');
  });

  it('fold a configured school id to characters every parser accepts', () => {
    expect(uidDomain({ id: 'St Mary’s @ Hill' })).toBe('st-mary-s-hill.rostercal');
    expect(uidDomain({ id: '***' })).toBe('-.rostercal');
    expect(uidDomain({ id: '' })).toBe('school.rostercal');
  });
});
