// Typed failures of the upstream API. Each names the endpoint as `METHOD /path` (never the query string, never the
// base URL's credentials) and a short reason taken from the response, with the bearer token scrubbed out. No error
// keeps a reference to the request, its headers or the client options, so neither `util.inspect` nor
// `JSON.stringify` of an error can reveal the token.

export class UpstreamError extends Error {
  /** `GET /sessions`, `PATCH /users`, `GET /teams/42`. */
  readonly endpoint: string;
  /** HTTP status, or null when no response arrived (network failure, timeout). */
  readonly status: number | null;
  readonly reason: string;
  /** True when the same request may succeed later (429, 5xx, network, timeout). */
  readonly retryable: boolean;

  constructor(endpoint: string, status: number | null, reason: string, retryable = false) {
    super(`${endpoint} failed${status === null ? '' : ` with ${status}`}: ${reason}`);
    this.name = new.target.name;
    this.endpoint = endpoint;
    this.status = status;
    this.reason = reason;
    this.retryable = retryable;
  }

  toJSON(): Record<string, unknown> {
    return { name: this.name, endpoint: this.endpoint, status: this.status, reason: this.reason };
  }
}

/** 400: e.g. `sisId` sent together with `externalId`. */
export class BadRequestError extends UpstreamError {}
/** 401: no valid API token. */
export class UnauthorizedError extends UpstreamError {}
/** 403: the token lacks permission (e.g. a read-only token writing). */
export class ForbiddenError extends UpstreamError {}
/** 404: the record does not exist. */
export class NotFoundError extends UpstreamError {}
/** 409: conflicts with an existing record. */
export class ConflictError extends UpstreamError {}
/** 422: unacceptable content (e.g. external ids of an integration-synced user). */
export class UnprocessableError extends UpstreamError {}
/** Any other 4xx. */
export class ClientError extends UpstreamError {}

/** 429 after the retries ran out (or on a write whose retries ran out). */
export class RateLimitedError extends UpstreamError {
  /** The server's Retry-After, when it sent one. */
  readonly retryAfterMs: number | null;
  constructor(endpoint: string, reason: string, retryAfterMs: number | null) {
    super(endpoint, 429, reason, true);
    this.retryAfterMs = retryAfterMs;
  }
}

/** 5xx. */
export class ServerError extends UpstreamError {}

/** No response: connection refused, reset, DNS failure. */
export class NetworkError extends UpstreamError {
  constructor(endpoint: string, reason: string) {
    super(endpoint, null, reason, true);
  }
}

/**
 * The service cannot be reached at all: connection refused, no such host, no route, a TLS certificate that does
 * not verify. Unlike a 5xx or a timeout this does not pass in seconds, so it is retried briefly and then ends
 * the run, saying where and why in one line.
 */
export class UnreachableError extends NetworkError {
  readonly url: string;
  constructor(endpoint: string, url: string, cause: string) {
    super(endpoint, `cannot reach the upstream service at ${url}: ${cause}`);
    this.url = url;
  }
}

/** No complete response within the client's timeout. */
export class TimeoutError extends UpstreamError {
  constructor(endpoint: string, timeoutMs: number, reason = `no response within ${timeoutMs} ms`) {
    super(endpoint, null, reason, true);
  }
}

/**
 * The timeout's timer fired long after it was due: this process did not run meanwhile (SIGSTOP, a suspended VM, a
 * loop held), so the answer may have been there all along. Not the upstream's trouble: tried again, never counted
 * toward an outage, and said as ours.
 */
export class StalledError extends TimeoutError {
  constructor(endpoint: string, timeoutMs: number, lateMs: number) {
    super(
      endpoint,
      timeoutMs,
      `no answer read within ${timeoutMs} ms because this process did not run for ${(lateMs / 1000).toFixed(1)} s ` +
        '(stopped, suspended or starved); not the upstream service',
    );
  }
}

/** A 2xx response whose body is not what the spec describes (not JSON, no `data` array, …). */
export class InvalidResponseError extends UpstreamError {}

export function errorForStatus(endpoint: string, status: number, reason: string): UpstreamError {
  switch (status) {
    case 400:
      return new BadRequestError(endpoint, status, reason);
    case 401:
      return new UnauthorizedError(endpoint, status, reason);
    case 403:
      return new ForbiddenError(endpoint, status, reason);
    case 404:
      return new NotFoundError(endpoint, status, reason);
    case 409:
      return new ConflictError(endpoint, status, reason);
    case 422:
      return new UnprocessableError(endpoint, status, reason);
    case 429:
      return new RateLimitedError(endpoint, reason, null);
    default:
      return status >= 500
        ? new ServerError(endpoint, status, reason, true)
        : new ClientError(endpoint, status, reason);
  }
}

/**
 * Every read for a while met a 5xx, a timeout or no answer, and so did the one tried after another read had
 * spent its retries: the service is down, and what is still to read would only spend its retries too. Ends the
 * run at once (the next one tries again). `cause` is the last failure.
 */
export class UpstreamDownError extends UpstreamError {
  /** How long nothing but failures came back (ms). */
  readonly forMs: number;
  constructor(endpoint: string, last: UpstreamError, forMs: number) {
    super(
      endpoint,
      null,
      `the upstream service has answered nothing but errors and timeouts for ${Math.round(forMs / 1000)} s (last: ${last.message}); not asking it more this run, the next run tries again`,
      true,
    );
    this.forMs = forMs;
  }
}
