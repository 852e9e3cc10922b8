// push/outlook/auth.ts against the fake Entra token endpoint over TLS (MSAL through @azure/identity, unchanged): a
// static token is handed over as it is; the app's client secret gets a token Graph accepts, asked once and kept; a
// wrong secret is refused; a token endpoint that never answers fails at requestTimeoutMs, not never.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphAuthProvider } from '../../../src/push/outlook/auth.ts';
import type { FakeGraph } from '../../fakes/graph.ts';
import { ANN, graphFake, settingsOn } from './on-fake.ts';

const APP = { tenant: 'hill-tenant', clientId: 'rostercal-app', clientSecret: 'graph-secret' };

let fake: FakeGraph;
beforeAll(async () => {
  fake = await graphFake({ apps: [APP] });
});
afterAll(() => fake?.close());

const secretSettings = (clientSecret: string, over: Record<string, unknown> = {}) => {
  const s = settingsOn(fake, { requestTimeoutMs: 1_000, ...over });
  return {
    ...s,
    auth: { kind: 'clientSecret' as const, tenantId: APP.tenant, clientId: APP.clientId, clientSecret },
  };
};

describe('Graph credentials', () => {
  it('a static access token is handed over as it is', async () => {
    expect(await graphAuthProvider(settingsOn(fake)).getAccessToken()).toBe(fake.token);
  });

  it("the app's client secret gets a token Graph accepts, asked once and then kept", async () => {
    const provider = graphAuthProvider(secretSettings(APP.clientSecret));
    fake.resetStats();
    const token = await provider.getAccessToken();
    const grants = fake.stats.requests;
    expect(grants).toBeGreaterThan(0);
    expect(await provider.getAccessToken()).toBe(token);
    expect(fake.stats.requests).toBe(grants);
    const res = await fetch(`${fake.url}/v1.0/users/${ANN}/calendars`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(res.status).toBe(200);
  });

  it('a wrong secret is refused with the endpoint’s words', async () => {
    await expect(graphAuthProvider(secretSettings('wrong')).getAccessToken()).rejects.toThrow(
      /AADSTS7000215/,
    );
  });

  it('a token endpoint that never answers fails at requestTimeoutMs', async () => {
    fake.knobs.faults = [{ match: /oauth2\/v2\.0\/token$/, stall: true, status: 500 }];
    const started = Date.now();
    try {
      await expect(
        graphAuthProvider(secretSettings(APP.clientSecret, { requestTimeoutMs: 400 })).getAccessToken(),
      ).rejects.toThrow();
      expect(Date.now() - started).toBeGreaterThanOrEqual(400);
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      fake.knobs.faults = [];
    }
  });
});
