// The fakes speak the wire protocol the real client libraries expect: these tests drive them with @googleapis/calendar,
// @microsoft/microsoft-graph-client and @azure/identity exactly as the engine does.
import { generateKeyPairSync } from 'node:crypto';
import { ClientSecretCredential } from '@azure/identity';
import { calendar } from '@googleapis/calendar';
import { Client } from '@microsoft/microsoft-graph-client';
import { TokenCredentialAuthenticationProvider } from '@microsoft/microsoft-graph-client/authProviders/azureTokenCredentials/index.js';
import { OAuth2Client } from 'google-auth-library';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeGoogle, startFakeGoogle } from '../fakes/google-calendar.ts';
import { type FakeGraph, startFakeGraph } from '../fakes/graph.ts';
import { trustCertificate } from '../fakes/tls.ts';

function reasonOf(err: unknown): { status?: number; reason?: string } {
  const e = err as { response?: { status?: number; data?: { error?: { errors?: { reason?: string }[] } } } };
  return { status: e.response?.status, reason: e.response?.data?.error?.errors?.[0]?.reason };
}

describe('fake Google Calendar', () => {
  let fake: FakeGoogle;
  beforeAll(async () => {
    fake = await startFakeGoogle();
  });
  afterAll(() => fake.close());

  function calendarApi(token = fake.token) {
    const auth = new OAuth2Client();
    auth.setCredentials({ access_token: token });
    return calendar({ version: 'v3', auth, rootUrl: fake.url, retry: false });
  }

  it('creates a calendar, inserts with a client id, lingers cancelled, and answers 409/410 like Google', async () => {
    const api = calendarApi();
    const cal = await api.calendars.insert({
      requestBody: { summary: 'U14 Netball', timeZone: 'Europe/London' },
    });
    const calendarId = cal.data.id!;
    const event = {
      id: 'abcdefghijklmnopqrstuv0123',
      summary: 'Training',
      start: { dateTime: '2026-12-01T16:00:00Z' },
      end: { dateTime: '2026-12-01T17:00:00Z' },
      extendedProperties: { private: { rostercal: 's1:t1', rostercalSession: '7' } },
    };
    const ins = await api.events.insert({ calendarId, requestBody: event, sendUpdates: 'none' });
    expect(ins.data.id).toBe(event.id);
    await expect(api.events.insert({ calendarId, requestBody: event })).rejects.toSatisfy(
      (e) => reasonOf(e).status === 409 && reasonOf(e).reason === 'duplicate',
    );
    await expect(
      api.events.insert({ calendarId, requestBody: { ...event, id: 'UPPER-case' } }),
    ).rejects.toSatisfy((e) => reasonOf(e).status === 400);

    const listed = await api.events.list({ calendarId, privateExtendedProperty: ['rostercal=s1:t1'] });
    expect(listed.data.items?.map((e) => e.id)).toEqual([event.id]);
    const other = await api.events.list({ calendarId, privateExtendedProperty: ['rostercal=s1:t2'] });
    expect(other.data.items).toEqual([]);

    await api.events.delete({ calendarId, eventId: event.id });
    await expect(api.events.delete({ calendarId, eventId: event.id })).rejects.toSatisfy(
      (e) => reasonOf(e).status === 410,
    );
    expect((await api.events.list({ calendarId })).data.items).toEqual([]);
    const withDeleted = await api.events.list({ calendarId, showDeleted: true });
    expect(withDeleted.data.items?.[0]?.status).toBe('cancelled');
    await expect(api.events.insert({ calendarId, requestBody: event })).rejects.toSatisfy(
      (e) => reasonOf(e).status === 409,
    );
    const back = await api.events.patch({
      calendarId,
      eventId: event.id,
      requestBody: { status: 'confirmed' },
    });
    expect(back.data.status).toBe('confirmed');
    expect(fake.liveEvents(calendarId)).toHaveLength(1);
  });

  it('pages listings and filters by window', async () => {
    const api = calendarApi();
    const calendarId = (await api.calendars.insert({ requestBody: { summary: 'Paging' } })).data.id!;
    for (let i = 0; i < 7; i++) {
      await api.events.insert({
        calendarId,
        requestBody: {
          id: `page0${i}aa`,
          summary: `e${i}`,
          start: { dateTime: `2026-12-0${i + 1}T10:00:00Z` },
          end: { dateTime: `2026-12-0${i + 1}T11:00:00Z` },
        },
      });
    }
    const first = await api.events.list({ calendarId, maxResults: 3 });
    expect(first.data.items).toHaveLength(3);
    const second = await api.events.list({ calendarId, maxResults: 3, pageToken: first.data.nextPageToken! });
    expect(second.data.items?.[0]?.summary).toBe('e3');
    const window = await api.events.list({
      calendarId,
      timeMin: '2026-12-03T00:00:00Z',
      timeMax: '2026-12-05T00:00:00Z',
    });
    expect(window.data.items?.map((e) => e.summary)).toEqual(['e2', 'e3']);
  });

  it('throttles with the reasons Google uses, and rejects bad tokens with 401', async () => {
    const api = calendarApi();
    fake.knobs.throttleRate = 1;
    fake.knobs.throttleKinds = ['userRateLimitExceeded'];
    await expect(api.calendars.insert({ requestBody: { summary: 'x' } })).rejects.toSatisfy(
      (e) => reasonOf(e).status === 403 && reasonOf(e).reason === 'userRateLimitExceeded',
    );
    fake.knobs.throttleRate = 0;
    await expect(calendarApi('wrong').calendars.insert({ requestBody: { summary: 'x' } })).rejects.toSatisfy(
      (e) => reasonOf(e).status === 401,
    );
  });

  it('grants tokens to a service account with a verified JWT', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const sa = await startFakeGoogle({
      serviceAccounts: [
        {
          clientEmail: 'sa@proj.iam.gserviceaccount.com',
          publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
        },
      ],
    });
    try {
      const { createSign } = await import('node:crypto');
      const now = Math.floor(Date.now() / 1000);
      const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
      const unsigned = `${enc({ alg: 'RS256', typ: 'JWT' })}.${enc({ iss: 'sa@proj.iam.gserviceaccount.com', sub: 'coach@school.org', scope: 'x', aud: sa.tokenUrl, iat: now, exp: now + 3600 })}`;
      const sig = createSign('RSA-SHA256').update(unsigned).sign(privateKey).toString('base64url');
      const res = await fetch(sa.tokenUrl, {
        method: 'POST',
        body: new URLSearchParams({
          grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer',
          assertion: `${unsigned}.${sig}`,
        }),
      });
      expect(res.status).toBe(200);
      const { access_token } = (await res.json()) as { access_token: string };
      const auth = new OAuth2Client();
      auth.setCredentials({ access_token });
      const api = calendar({ version: 'v3', auth, rootUrl: sa.url });
      const primary = await api.calendars.get({ calendarId: 'primary' });
      expect(primary.data.id).toBe('coach@school.org');
      const bad = await fetch(sa.tokenUrl, {
        method: 'POST',
        body: new URLSearchParams({
          grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer',
          assertion: `${unsigned}.AAAA`,
        }),
      });
      expect(bad.status).toBe(400);
    } finally {
      await sa.close();
    }
  });
});

describe('fake Microsoft Graph', () => {
  let fake: FakeGraph;
  beforeAll(async () => {
    fake = await startFakeGraph({
      apps: [{ tenant: 'school-tenant', clientId: 'app-id', clientSecret: 's3cret' }],
      mailboxes: ['coach@school.org', 'pupil@school.org'],
      unlicensedMailboxes: ['nolicence@school.org'],
    });
    trustCertificate(fake.cert);
  });
  afterAll(() => fake.close());

  function graph() {
    const credential = new ClientSecretCredential('school-tenant', 'app-id', 's3cret', {
      authorityHost: fake.authorityHost,
      disableInstanceDiscovery: true,
    });
    const authProvider = new TokenCredentialAuthenticationProvider(credential, {
      scopes: ['https://graph.microsoft.com/.default'],
    });
    return Client.initWithMiddleware({ authProvider, baseUrl: fake.url, customHosts: new Set([fake.host]) });
  }

  it('authenticates through @azure/identity and manages a dedicated calendar', async () => {
    const client = graph();
    const prefer = 'IdType="ImmutableId"';
    const created = await client
      .api('/users/coach@school.org/calendars')
      .header('Prefer', prefer)
      .post({ name: 'School activities' });
    expect(created.id).toBeTruthy();
    await expect(
      client
        .api('/users/coach@school.org/calendars')
        .header('Prefer', prefer)
        .post({ name: 'School activities' }),
    ).rejects.toMatchObject({ statusCode: 409, code: 'ErrorFolderExists' });
    const found = await client
      .api('/users/coach@school.org/calendars')
      .header('Prefer', prefer)
      .filter("name eq 'School activities'")
      .get();
    expect(found.value.map((c: { id: string }) => c.id)).toEqual([created.id]);
    await expect(client.api('/users/ghost@school.org/calendars').get()).rejects.toMatchObject({
      statusCode: 404,
      code: 'ErrorInvalidUser',
    });
    await expect(client.api('/users/nolicence@school.org/calendars').get()).rejects.toMatchObject({
      statusCode: 404,
      code: 'MailboxNotEnabledForRESTAPI',
    });
  });

  it('dedupes creates by transactionId, filters and expands extended properties, pages with nextLink', async () => {
    const client = graph();
    const prop = 'String {66f5a359-4659-4830-9070-00047ec6ac6e} Name rostercal';
    const cal = await client.api('/users/pupil@school.org/calendars').post({ name: 'School activities' });
    const path = `/users/pupil@school.org/calendars/${cal.id}/events`;
    const body = (i: number) => ({
      subject: `Session ${i}`,
      start: { dateTime: `2026-12-01T1${i}:00:00`, timeZone: 'UTC' },
      end: { dateTime: `2026-12-01T1${i}:30:00`, timeZone: 'UTC' },
      transactionId: `tx-${i}`,
      singleValueExtendedProperties: [{ id: prop, value: 's1:t1' }],
    });
    const a = await client.api(path).post(body(1));
    const again = await client.api(path).post(body(1));
    expect(again.id).toBe(a.id);
    for (let i = 2; i <= 5; i++) await client.api(path).post(body(i));
    await expect(client.api(path).post({ ...body(6), bogus: 1 })).rejects.toMatchObject({ statusCode: 400 });

    const first = await client
      .api(path)
      .filter(`singleValueExtendedProperties/Any(ep: ep/id eq '${prop}' and ep/value eq 's1:t1')`)
      .expand(`singleValueExtendedProperties($filter=id eq '${prop}')`)
      .top(3)
      .get();
    expect(first.value).toHaveLength(3);
    expect(first.value[0].singleValueExtendedProperties).toEqual([{ id: prop, value: 's1:t1' }]);
    const next = await client.api(first['@odata.nextLink']).get();
    expect(next.value).toHaveLength(2);
    expect(next['@odata.nextLink']).toBeUndefined();
  });

  it('honours transactionId only as Graph documents it: a retry into the same calendar, while the event exists', async () => {
    const client = graph();
    const a = await client.api('/users/pupil@school.org/calendars').post({ name: 'Tx A' });
    const b = await client.api('/users/pupil@school.org/calendars').post({ name: 'Tx B' });
    const events = (cal: { id: string }) => `/users/pupil@school.org/calendars/${cal.id}/events`;
    const body = {
      subject: 'Tx',
      start: { dateTime: '2026-12-03T10:00:00', timeZone: 'UTC' },
      end: { dateTime: '2026-12-03T11:00:00', timeZone: 'UTC' },
      transactionId: 'tx-scope',
    };
    const first = await client.api(events(a)).post(body);
    expect((await client.api(events(a)).post(body)).id).toBe(first.id);
    // Another calendar of the same mailbox: a create of its own.
    const other = await client.api(events(b)).post(body);
    expect(other.id).not.toBe(first.id);
    // Deleted since: the same transactionId creates again.
    await client.api(`/users/pupil@school.org/events/${first.id}`).delete();
    const again = await client.api(events(a)).post(body);
    expect(again.id).not.toBe(first.id);
    // Remembered for a limited time only.
    fake.knobs.transactionIdWindowMs = 0;
    try {
      expect((await client.api(events(a)).post(body)).id).not.toBe(again.id);
    } finally {
      fake.knobs.transactionIdWindowMs = 10 * 60_000;
    }
    expect(fake.events('pupil@school.org', 'Tx A')).toHaveLength(2);
    expect(fake.events('pupil@school.org', 'Tx B')).toHaveLength(1);
  });

  it('loses answers after applying the write: a 503 the SDK retries lands once only thanks to transactionId', async () => {
    const client = graph();
    const cal = await client.api('/users/pupil@school.org/calendars').post({ name: 'Lost answers' });
    const path = `/users/pupil@school.org/calendars/${cal.id}/events`;
    const body = (tx: string) => ({
      subject: tx,
      start: { dateTime: '2026-12-04T10:00:00', timeZone: 'UTC' },
      end: { dateTime: '2026-12-04T11:00:00', timeZone: 'UTC' },
      transactionId: tx,
    });
    const lose = (extra: Partial<(typeof fake.knobs.faults)[number]> = {}) => {
      fake.knobs.faults = [
        {
          when: 'after-apply',
          match: /^POST \/users\/[^/]+\/calendars\/[^/]+\/events$/,
          status: 503,
          retryAfterSeconds: 0.01,
          limit: 1,
          ...extra,
        },
      ];
    };
    try {
      fake.resetStats();
      lose();
      // The SDK's RetryHandler sends the POST again after the 503: the event exists once.
      await client.api(path).post(body('tx-lost-1'));
      expect(fake.stats.answersLost).toBe(1);
      expect(fake.stats.deduplicatedCreates).toBe(1);
      expect(fake.events('pupil@school.org', 'Lost answers')).toHaveLength(1);

      // Not hollow: without transactionId the same lost answer leaves two events.
      fake.knobs.transactionIdWindowMs = 0;
      lose();
      await client.api(path).post(body('tx-lost-2'));
      expect(
        fake.events('pupil@school.org', 'Lost answers').filter((e) => e.subject === 'tx-lost-2'),
      ).toHaveLength(2);
      fake.knobs.transactionIdWindowMs = 10 * 60_000;

      // A dropped connection after the write: the client sees a network error, the event exists all the same.
      lose({ drop: true });
      await expect(client.api(path).post(body('tx-lost-3'))).rejects.toThrow();
      expect(
        fake.events('pupil@school.org', 'Lost answers').filter((e) => e.subject === 'tx-lost-3'),
      ).toHaveLength(1);
      await client.api(path).post(body('tx-lost-3'));
      expect(
        fake.events('pupil@school.org', 'Lost answers').filter((e) => e.subject === 'tx-lost-3'),
      ).toHaveLength(1);

      // Inside a $batch: the item's answer is the 504; the event exists.
      lose({ status: 504 });
      const batch = await client.api('/$batch').post({
        requests: [
          {
            id: '1',
            method: 'POST',
            url: path,
            headers: { 'Content-Type': 'application/json' },
            body: body('tx-lost-4'),
          },
        ],
      });
      expect(batch.responses[0].status).toBe(504);
      expect(
        fake.events('pupil@school.org', 'Lost answers').filter((e) => e.subject === 'tx-lost-4'),
      ).toHaveLength(1);
    } finally {
      fake.knobs.faults = [];
      fake.knobs.transactionIdWindowMs = 10 * 60_000;
    }
  });

  it('runs $batch items concurrently, enforces 20 items and 4 per mailbox, reports throttles inside', async () => {
    const client = graph();
    const cal = await client
      .api('/users/coach@school.org/calendars')
      .filter("name eq 'School activities'")
      .get();
    const path = `/users/coach@school.org/calendars/${cal.value[0].id}/events`;
    const item = (i: number, dependsOn?: string[]) => ({
      id: String(i),
      method: 'POST',
      url: path,
      headers: { 'Content-Type': 'application/json', Prefer: 'IdType="ImmutableId"' },
      body: {
        subject: `b${i}`,
        start: { dateTime: '2026-12-02T10:00:00', timeZone: 'UTC' },
        end: { dateTime: '2026-12-02T11:00:00', timeZone: 'UTC' },
      },
      ...(dependsOn ? { dependsOn } : {}),
    });
    await expect(
      client.api('/$batch').post({ requests: Array.from({ length: 21 }, (_, i) => item(i)) }),
    ).rejects.toMatchObject({ statusCode: 400 });

    fake.knobs.batchItemLatencyMs = 20;
    const flat = await client.api('/$batch').post({ requests: Array.from({ length: 6 }, (_, i) => item(i)) });
    const statuses = flat.responses.map((r: { status: number }) => r.status).sort();
    expect(statuses.filter((s: number) => s === 201)).toHaveLength(4);
    expect(statuses.filter((s: number) => s === 429)).toHaveLength(2);
    const throttled = flat.responses.find((r: { status: number }) => r.status === 429);
    expect(throttled.headers['Retry-After']).toBeDefined();

    fake.resetStats();
    const chained = await client.api('/$batch').post({
      requests: Array.from({ length: 8 }, (_, i) =>
        item(100 + i, i >= 4 ? [String(100 + i - 4)] : undefined),
      ),
    });
    expect(chained.responses.every((r: { status: number }) => r.status === 201)).toBe(true);
    expect(fake.stats.maxConcurrencyPerMailbox['coach@school.org']).toBe(4);
    expect(fake.stats.requests).toBe(1);
    fake.knobs.batchItemLatencyMs = 1;
  });
});
