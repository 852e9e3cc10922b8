// Google credentials for the Calendar client (@googleapis/calendar): a static access token, or a service
// account (optionally acting as a user through domain-wide delegation). The JWT-bearer grant is done here rather
// than by google-auth-library's JWT client because that one posts to a hard-coded token URL, and a deployment
// behind a proxy or an emulator needs the token endpoint configurable. The token itself never leaves this module except as a bearer header.
import { createSign } from 'node:crypto';
import { OAuth2Client } from 'google-auth-library';
import type { GoogleAuth } from '../../config/push-targets.ts';

export const CALENDAR_SCOPE = 'https://www.googleapis.com/auth/calendar';

export class GoogleAuthError extends Error {
  override name = 'GoogleAuthError';
  /** true when the account itself is unusable (unknown user for delegation, disabled, …). */
  readonly accountProblem: boolean;
  constructor(message: string, accountProblem: boolean) {
    super(message);
    this.accountProblem = accountProblem;
  }
}

function b64url(value: object): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

async function jwtBearerToken(
  key: { clientEmail: string; privateKey: string; tokenUri: string },
  subject: string | null,
  timeoutMs: number,
): Promise<{ access_token: string; expiry_date: number }> {
  const now = Math.floor(Date.now() / 1000);
  const claims = {
    iss: key.clientEmail,
    scope: CALENDAR_SCOPE,
    aud: key.tokenUri,
    iat: now,
    exp: now + 3600,
    ...(subject ? { sub: subject } : {}),
  };
  const unsigned = `${b64url({ alg: 'RS256', typ: 'JWT' })}.${b64url(claims)}`;
  const signature = createSign('RSA-SHA256').update(unsigned).sign(key.privateKey).toString('base64url');
  let res: Response;
  try {
    res = await fetch(key.tokenUri, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer',
        assertion: `${unsigned}.${signature}`,
      }),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (err) {
    throw new GoogleAuthError(`token endpoint unreachable: ${(err as Error).message}`, false);
  }
  let text: string;
  try {
    text = await res.text();
  } catch (err) {
    throw new GoogleAuthError(`token endpoint's answer cut short: ${(err as Error).message}`, false);
  }
  let json: { access_token?: string; expires_in?: number; error?: string; error_description?: string } = {};
  try {
    json = JSON.parse(text);
  } catch {}
  if (!res.ok || !json.access_token) {
    const what = [json.error, json.error_description].filter(Boolean).join(': ') || `HTTP ${res.status}`;
    const who = subject ? ` acting as ${subject}` : '';
    // invalid_grant for a delegated user: the account does not exist or delegation is not allowed for it.
    throw new GoogleAuthError(
      `service account ${key.clientEmail}${who}: ${what}`,
      Boolean(subject) && json.error === 'invalid_grant',
    );
  }
  return { access_token: json.access_token, expiry_date: Date.now() + (json.expires_in ?? 3600) * 1000 };
}

/**
 * An OAuth2 client (google-auth-library) for the Calendar client; `subject` overrides the configured delegation
 * subject; `timeoutMs` limits each token request.
 */
export function googleAuthClient(
  auth: GoogleAuth,
  subject: string | null | undefined,
  timeoutMs: number,
): OAuth2Client {
  const client = new OAuth2Client();
  if (auth.kind === 'token') {
    client.setCredentials({ access_token: auth.accessToken });
    return client;
  }
  const sub = subject === undefined ? auth.subject : subject;
  client.refreshHandler = () => jwtBearerToken(auth.key, sub, timeoutMs);
  return client;
}
