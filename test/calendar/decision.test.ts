// What a session is, decided once for every output (calendar/decision.ts): home or away from the venue's owner,
// cancelled and why in the school's words, the result from the scores, the title in the default wording, the
// school's own date and clock. Sessions and context are hand-built (test/calendar/fixtures.ts); the wording is the
// shipped templates/events/default.json.
import { describe, expect, it } from 'vitest';
import {
  decideSession,
  formatResult,
  homeOrAway,
  isFixture,
  withoutCancellationNotice,
} from '../../src/calendar/decision.ts';
import { ctx, session } from './fixtures.ts';

const team = { scope: 'team', id: 10 } as const;
const elsewhere = {
  id: 8,
  name: 'St Mary’s Park',
  address: '2 Park Road',
  latitude: null,
  longitude: null,
  owner: { id: 99, name: 'St Mary’s', acronym: null, shortName: null },
};

describe('decideSession', () => {
  it('decides a training session: confirmed, no fixture, the team’s name, the school’s day and clock', () => {
    const d = decideSession(session({ title: '' }), ctx(), 'guardian', team);
    expect(d).toMatchObject({
      title: 'U15 Football',
      fixture: false,
      bye: false,
      cancelled: false,
      cancellationReason: null,
      status: 'confirmed',
      state: 'confirmed',
      result: null,
      where: 'home',
      timeZone: 'Europe/London',
      date: '2026-03-28',
      time: '15:30–17:00',
    });
  });

  it('uses the school’s calendar day, not the UTC one', () => {
    const late = session({ start: '2026-07-01T23:30:00.000Z', end: '2026-07-02T00:30:00.000Z' });
    const d = decideSession(late, ctx(), 'staff', team);
    expect(d.date).toBe('2026-07-02');
    expect(d.time).toBe('00:30–01:30');
  });

  it('says home or away from the venue’s owner, in the title too', () => {
    const home = session({ opponent: 'St Mary’s', title: '' });
    expect(decideSession(home, ctx(), 'guardian', team).title).toBe('U15 Football vs St Mary’s (home)');
    const away = session({ opponent: 'St Mary’s', title: '', location: elsewhere });
    expect(decideSession(away, ctx(), 'guardian', team)).toMatchObject({
      where: 'away',
      title: 'U15 Football vs St Mary’s (away)',
    });
    const unknown = decideSession(home, ctx({ locationOwnerIds: [] }), 'guardian', team);
    expect(unknown).toMatchObject({ where: null, title: 'U15 Football vs St Mary’s' });
  });

  it('does not name the opponent twice when the school’s title does', () => {
    const s = session({ opponent: 'St Mary’s', title: 'U15 Football vs St Mary’s' });
    expect(decideSession(s, ctx(), 'staff', team).title).toBe('U15 Football vs St Mary’s (home)');
  });

  it('keeps a title that carries the team’s name, prefixes one that does not, and says the team for less', () => {
    const title = (t: string) => decideSession(session({ title: t }), ctx(), 'staff', team).title;
    expect(title('U15 Football Training')).toBe('U15 Football Training');
    expect(title('Grand Final')).toBe('U15 Football: Grand Final');
    expect(title('football')).toBe('U15 Football');
    const noTeam = session({ title: 'Open nets', teams: [] });
    expect(decideSession(noTeam, ctx(), 'staff').title).toBe('Open nets');
  });

  it('names the team in scope alone where a session has several, and joins them outside a team’s feed', () => {
    const teams = [
      { id: 10, name: 'U15 Football', category: null, subcategory: null, customFieldsData: {} },
      { id: 11, name: 'U16 Football', category: null, subcategory: null, customFieldsData: {} },
    ];
    const s = session({ title: '', teams });
    expect(decideSession(s, ctx(), 'staff', { scope: 'team', id: 11 }).title).toBe('U16 Football');
    expect(decideSession(s, ctx(), 'staff').title).toBe('U15 Football & U16 Football');
    expect(
      decideSession(session({ title: '', activity: { ...s.activity, name: 'Netball' } }), ctx(), 'staff')
        .title,
    ).toBe('Netball U15 Football');
    const noActivity = session({ title: '', activity: { ...s.activity, name: ' ' } });
    expect(decideSession(noActivity, ctx(), 'staff', team).title).toBe('U15 Football');
  });

  it('decides a cancelled session: status, state, and the reason without the notice', () => {
    const s = session({
      cancelled: true,
      status: 'unconfirmed',
      title: '',
      studentParentNotes: 'This session has been cancelled. The pitch is waterlogged.',
    });
    expect(decideSession(s, ctx(), 'guardian', team)).toMatchObject({
      cancelled: true,
      cancellationReason: 'The pitch is waterlogged.',
      status: 'cancelled',
      state: 'cancelled',
      title: 'Cancelled: U15 Football (unconfirmed)',
    });
    const bare = session({ cancelled: true, studentParentNotes: 'Cancelled!' });
    expect(decideSession(bare, ctx(), 'guardian', team).cancellationReason).toBeNull();
  });

  it('marks unconfirmed sessions tentative and drafts as drafts', () => {
    const s = session({ status: 'unconfirmed', title: '' });
    expect(decideSession(s, ctx(), 'staff', team)).toMatchObject({
      status: 'tentative',
      state: 'unconfirmed',
    });
    const draft = session({ status: 'draft', title: '', opponent: 'Hill School' });
    expect(decideSession(draft, ctx(), 'staff', team)).toMatchObject({
      status: 'tentative',
      state: 'draft',
      title: '[Draft] U15 Football vs Hill School (home)',
    });
  });

  it('decides a bye: a fixture with no game and no result', () => {
    const s = session({ bye: true, title: '', organisationScore: '3', opponentScore: '0' });
    expect(decideSession(s, ctx(), 'guardian', team)).toMatchObject({
      fixture: true,
      bye: true,
      result: null,
      title: 'U15 Football: no game (bye)',
    });
  });

  it('puts the result in the title', () => {
    const s = session({ opponent: 'Hill School', title: '', organisationScore: '3', opponentScore: '1' });
    expect(decideSession(s, ctx(), 'guardian', team)).toMatchObject({
      result: 'Won 3–1',
      title: 'U15 Football vs Hill School (home) – Won 3–1',
    });
  });

  it('caps a title that would run too long', () => {
    const s = session({ title: `Grand Final ${'and more '.repeat(80)}` });
    expect(decideSession(s, ctx(), 'staff', team).title.length).toBeLessThan(400);
  });
});

describe('formatResult', () => {
  const fixture = (over: Parameters<typeof session>[0]) =>
    formatResult(session({ opponent: 'Hill', ...over }), ctx());
  it('reads the result from the scores when the upstream gives none', () => {
    expect(fixture({ organisationScore: '3', opponentScore: '1' })).toBe('Won 3–1');
    expect(fixture({ organisationScore: ' 0 ', opponentScore: '2' })).toBe('Lost 0–2');
    expect(fixture({ organisationScore: '2', opponentScore: '2' })).toBe('Draw 2–2');
    expect(fixture({ organisationScore: 'W', opponentScore: '2' })).toBeNull();
    expect(fixture({ organisationScore: '3', opponentScore: '' })).toBeNull();
  });

  it('says what the upstream result says, with or without scores', () => {
    expect(fixture({ result: 'win' })).toBe('Won');
    expect(fixture({ result: 'loss' })).toBe('Lost');
    expect(fixture({ result: 'draw' })).toBe('Draw');
    expect(fixture({ result: 'loss', organisationScore: '3', opponentScore: '1' })).toBe('Lost 3–1');
    expect(fixture({ result: 'forfeit' })).toBe('Lost by forfeit');
    expect(fixture({ result: 'opponent-forfeit' })).toBe('Won by forfeit');
    expect(fixture({ result: 'no-result' })).toBe('No result');
  });

  it('gives none for a session that is not a fixture, or a bye', () => {
    expect(formatResult(session({ organisationScore: '3', opponentScore: '1' }), ctx())).toBeNull();
    expect(fixture({ bye: true, result: 'win' })).toBeNull();
  });
});

describe('isFixture, homeOrAway, withoutCancellationNotice', () => {
  it('counts a scored session, a bye or one with an opponent as a fixture', () => {
    expect(isFixture(session())).toBe(false);
    expect(isFixture(session({ opponent: '  ' }))).toBe(false);
    expect(isFixture(session({ opponent: 'Hill' }))).toBe(true);
    expect(isFixture(session({ scored: true }))).toBe(true);
    expect(isFixture(session({ bye: true }))).toBe(true);
  });

  it('gives null where the venue has no owner', () => {
    const school = ctx().school;
    expect(homeOrAway(session({ location: null }), school)).toBeNull();
    expect(homeOrAway(session({ location: { ...elsewhere, owner: null } }), school)).toBeNull();
    expect(homeOrAway(session(), school)).toBe('home');
    expect(homeOrAway(session({ location: elsewhere }), school)).toBe('away');
  });

  it('drops only the sentences that announce the cancellation', () => {
    expect(withoutCancellationNotice('Training is cancelled. Sorry!')).toBe('Sorry!');
    expect(withoutCancellationNotice("Tonight's match has been cancelled!\nRefunds at the office.")).toBe(
      'Refunds at the office.',
    );
    expect(withoutCancellationNotice('cancelled')).toBe('');
    expect(withoutCancellationNotice('The bus is cancelled, so parents please drive.')).toBe(
      'The bus is cancelled, so parents please drive.',
    );
  });
});
