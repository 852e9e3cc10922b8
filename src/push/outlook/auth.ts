// Microsoft Graph credentials, app-only: a static access token, or the app's client secret through MSAL
// (@azure/identity), whose token request gets the same time limit as every Graph request.
import { ClientSecretCredential } from '@azure/identity';
import type { AuthenticationProvider } from '@microsoft/microsoft-graph-client';
import { TokenCredentialAuthenticationProvider } from '@microsoft/microsoft-graph-client/authProviders/azureTokenCredentials/index.js';
import type { OutlookSettings } from '../../config/push-targets.ts';

const GRAPH_SCOPE = 'https://graph.microsoft.com/.default';
const DEFAULT_AUTHORITY = 'https://login.microsoftonline.com';

/** `promise`, or a TimeoutError once `ms` have passed without it settling. */
function withinTime<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(Object.assign(new Error(message), { name: 'TimeoutError', code: 'RequestTimeout' })),
      ms,
    );
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

export function graphAuthProvider(s: OutlookSettings): AuthenticationProvider {
  if (s.auth.kind === 'token') {
    const token = s.auth.accessToken;
    return { getAccessToken: async () => token };
  }
  const custom = s.authorityHost.replace(/\/+$/, '') !== DEFAULT_AUTHORITY;
  const credential = new ClientSecretCredential(s.auth.tenantId, s.auth.clientId, s.auth.clientSecret, {
    authorityHost: s.authorityHost,
    // A proxy or emulator is not in Microsoft's instance metadata.
    ...(custom ? { disableInstanceDiscovery: true } : {}),
  });
  // The token request is MSAL's, out of reach of the Graph client's middleware: it gets the same time limit here.
  // The abort signal is passed on, and the wait ends at the limit even if MSAL does not honour it.
  const timeoutMs = s.requestTimeoutMs;
  const limited = {
    getToken: (scopes: string | string[], options?: Parameters<typeof credential.getToken>[1]) =>
      withinTime(
        credential.getToken(scopes, { ...options, abortSignal: AbortSignal.timeout(timeoutMs) }),
        timeoutMs,
        `no answer from the token endpoint within ${timeoutMs} ms`,
      ),
  };
  return new TokenCredentialAuthenticationProvider(limited, { scopes: [GRAPH_SCOPE] });
}
