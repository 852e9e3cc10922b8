// push/google/auth.ts against the fake Google's token endpoint over HTTP: a static token is sent as it is; a
// service account signs a JWT-bearer grant at the configured token URL (the fake checks the signature), acting as
// the subject, keeps the token until it expires and then asks again; an unknown delegated user is an account
// problem (its calendars are skipped), an unknown service account or an unreachable endpoint is not.
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GoogleAuth } from '../../../src/config/push-targets.ts';
import { GoogleAuthError, googleAuthClient } from '../../../src/push/google/auth.ts';
import { type FakeGoogle, startFakeGoogle } from '../../fakes/google-calendar.ts';

const SA = 'rostercal@hill-project.iam.gserviceaccount.com';
const pair = () => generateKeyPairSync('rsa', { modulusLength: 2048 });
const known = pair();

let fake: FakeGoogle;
beforeAll(async () => {
  fake = await startFakeGoogle({
    serviceAccounts: [
      { clientEmail: SA, publicKeyPem: known.publicKey.export({ type: 'spki', format: 'pem' }).toString() },
    ],
    unknownUsers: ['gone@hill.example'],
  });
});
afterAll(() => fake?.close());

const serviceAccount = (
  subject: string | null,
  privateKey = known.privateKey,
  tokenUri = fake.tokenUrl,
): GoogleAuth => ({
  kind: 'serviceAccount',
  key: {
    clientEmail: SA,
    privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    tokenUri,
  },
  subject,
});

async function refusal(auth: GoogleAuth, subject?: string | null): Promise<GoogleAuthError> {
  const err = await googleAuthClient(auth, subject, 2_000)
    .getAccessToken()
    .catch((e: unknown) => e);
  expect(err).toBeInstanceOf(GoogleAuthError);
  return err as GoogleAuthError;
}

describe('Google credentials', () => {
  it('a static access token is used as it is, with no grant', async () => {
    const before = fake.stats.requests;
    const client = googleAuthClient({ kind: 'token', accessToken: 'tok' }, null, 2_000);
    expect((await client.getAccessToken()).token).toBe('tok');
    expect(fake.stats.requests).toBe(before);
  });

  it('a service account gets a token by a signed grant, acting as the subject (the argument over the setting)', async () => {
    const client = googleAuthClient(serviceAccount('setting@hill.example'), 'ann@hill.example', 2_000);
    const { token } = await client.getAccessToken();
    expect(token).toMatch(/\S/);
    expect(fake.grantedPrincipals()).toContain('ann@hill.example');
    expect(fake.grantedPrincipals()).not.toContain('setting@hill.example');
    // The token it got works for the Calendar API: the fake knows it as ann's.
    const res = await fetch(new URL('calendar/v3/calendars/primary', fake.url), {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(((await res.json()) as { id: string }).id).toBe('ann@hill.example');
  });

  it('keeps the token until it expires, then asks for a new one', async () => {
    const client = googleAuthClient(serviceAccount(null), undefined, 2_000);
    const grants = () => fake.stats.requests;
    const first = (await client.getAccessToken()).token;
    const after = grants();
    expect((await client.getAccessToken()).token).toBe(first);
    expect(grants()).toBe(after);
    // An hour on: the library sees the token expired.
    client.credentials = { ...client.credentials, expiry_date: Date.now() - 1 };
    const second = (await client.getAccessToken()).token;
    expect(grants()).toBe(after + 1);
    expect(second).not.toBe(first);
  });

  it('an unknown delegated user is an account problem; an unknown key, or no endpoint, is not', async () => {
    const gone = await refusal(serviceAccount(null), 'gone@hill.example');
    expect([gone.accountProblem, gone.message]).toEqual([
      true,
      expect.stringMatching(new RegExp(`^service account ${SA} acting as gone@hill.example: invalid_grant`)),
    ]);
    const stranger = await refusal(serviceAccount(null, pair().privateKey));
    expect([stranger.accountProblem, stranger.message]).toEqual([
      false,
      `service account ${SA}: invalid_grant: Invalid JWT Signature.`,
    ]);
    const nowhere = await refusal(
      serviceAccount('ann@hill.example', known.privateKey, 'http://127.0.0.1:9/token'),
    );
    expect([nowhere.accountProblem, nowhere.message]).toEqual([
      false,
      expect.stringMatching(/^token endpoint unreachable: /),
    ]);
  });
});
