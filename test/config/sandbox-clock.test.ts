// SANDBOX_NOW starts serve's clock where the sandbox's school is built, for tests and demos only: a deployment
// whose upstream is not the sandbox is refused at start, naming the variable and the school, so a stray variable
// can never move a real school's "today".
import { describe, expect, it } from 'vitest';
import { clockStartingAt } from '../../src/config/sandbox-clock.ts';
import { loadConfig } from '../../src/config.ts';

const school = (url: string, token: string) => ({
  UPSTREAM_URL: url,
  UPSTREAM_TOKEN: token,
  SCHOOL_TZ: 'Australia/Sydney',
  SCHOOL_ID: 'hill',
  SCHOOL_NAME: 'Hillcrest College',
  PUBLIC_URL: 'https://calendars.example.org',
});
const AT = '2026-11-20T00:00:00Z';

describe('SANDBOX_NOW', () => {
  it('is unset by default: the real clock', async () => {
    expect((await loadConfig({ ...school('https://api.example.org', 'tok-abcdef-123456') })).sandboxNow).toBe(
      null,
    );
  });

  it('is taken with the demo school and with a sandbox on this machine, as an ISO instant', async () => {
    expect((await loadConfig({ SANDBOX_NOW: AT })).sandboxNow).toBe('2026-11-20T00:00:00.000Z');
    for (const host of ['127.0.0.1', 'localhost', '[::1]'])
      expect(
        (await loadConfig({ ...school(`http://${host}:4010`, 'sandbox-token'), SANDBOX_NOW: AT })).sandboxNow,
      ).toBe('2026-11-20T00:00:00.000Z');
  });

  it('is refused for any school another upstream serves, naming the variable and the school', async () => {
    for (const [url, token] of [
      ['https://api.example.org', 'tok-abcdef-123456'],
      // The sandbox's token on another machine, or this machine's loopback with a real token: not the sandbox.
      ['https://api.example.org', 'sandbox-token'],
      ['http://127.0.0.1:4010', 'tok-abcdef-123456'],
    ] as const)
      await expect(loadConfig({ ...school(url, token), SANDBOX_NOW: AT })).rejects.toThrow(
        /config: SANDBOX_NOW: sets serve's clock for tests and demos against the sandbox only, and hill is served by another upstream/,
      );
  });

  it('is refused when it is not an ISO instant', async () => {
    // Not a day of the calendar (Date.parse rolls 30 February into March), or with no zone: Date.parse reads a
    // time without one in this process's local zone, so the same setting would start the clock elsewhere per machine.
    for (const bad of [
      'tomorrow',
      '2026-11-20',
      '2026-13-45T00:00:00Z',
      '2026-02-30T00:00:00Z',
      '2026-11-20T24:00:00Z',
      '2026-11-20T10:00',
      '2026-11-20T10:00:00',
    ])
      await expect(loadConfig({ SANDBOX_NOW: bad })).rejects.toThrow(
        `config: SANDBOX_NOW: must be an ISO 8601 instant such as 2026-11-20T00:00:00Z, got "${bad}"`,
      );
  });

  it('takes an instant with a zone offset as that instant', async () => {
    expect((await loadConfig({ SANDBOX_NOW: '2026-11-20T10:00:00+10:00' })).sandboxNow).toBe(
      '2026-11-20T00:00:00.000Z',
    );
  });

  it('starts a clock there that runs at the real pace', () => {
    let real = Date.parse('2030-01-01T00:00:00Z');
    const now = clockStartingAt(AT, () => real);
    expect(now().toISOString()).toBe('2026-11-20T00:00:00.000Z');
    real += 90_000;
    expect(now().toISOString()).toBe('2026-11-20T00:01:30.000Z');
    expect(clockStartingAt(null, () => real)().getTime()).toBe(real);
  });
});
