// A session's round said once (calendar/round.ts): a name that already says "Round 11" stands alone, any other
// name ("Grand Final", "Round Robin") takes the school's wording, and a roster's "Round" label gets the number.
import { describe, expect, it } from 'vitest';
import { roundLine, roundValue } from '../../src/calendar/round.ts';
import { loadEventTemplates } from '../../src/calendar/templates.ts';

const templates = loadEventTemplates();

describe('roundLine', () => {
  it('gives a numbered round its own name, once, whatever its case and spacing', () => {
    expect(roundLine('Round 11', templates)).toBe('Round 11');
    expect(roundLine('  round  3 ', templates)).toBe('round  3');
  });

  it('gives any other name the school’s wording, "Round Robin" included (a stage, not a number)', () => {
    expect(roundLine('Grand Final', templates)).toBe('Round: Grand Final');
    expect(roundLine('Round Robin', templates)).toBe('Round: Round Robin');
    expect(roundLine('11', templates)).toBe('Round: 11');
  });

  it('fills the school’s own wording, not a fixed one', () => {
    const own = { ...templates, description: { ...templates.description, round: 'Stage — {round}' } };
    expect(roundLine('Semi Final', own)).toBe('Stage — Semi Final');
    expect(roundLine('Round 2', own)).toBe('Round 2');
  });
});

describe('roundValue', () => {
  it('keeps the number of a numbered round, so the label "Round" is not said twice', () => {
    expect(roundValue('Round 11')).toBe('11');
    expect(roundValue(' ROUND 4 ')).toBe('4');
  });

  it('keeps any other name whole', () => {
    expect(roundValue('Round Robin')).toBe('Round Robin');
    expect(roundValue('Grand Final')).toBe('Grand Final');
  });
});
