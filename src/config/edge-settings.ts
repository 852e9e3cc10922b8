// The configuration of the web app's edge: which reverse proxies are trusted to name the client
// (`trustProxy` / TRUST_PROXY) and an optional per-client limit on feed requests (`feedRateLimit` /
// FEED_RATE_LIMIT). src/config.ts validates both with these schemas and reads the variables with these parsers;
// the web app gets the typed values.
import { isIP } from 'node:net';
import { z } from 'zod';
import { ConfigError } from '../validation.ts';

/** Express's names for address ranges (proxy-addr). */
const RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'] as const;

const TRUST_PROXY_FORMS =
  'a hop count (1 = the one proxy in front), "loopback", "linklocal", "uniquelocal", or a comma-separated list of addresses and CIDR ranges (e.g. "10.0.0.0/8, 172.16.0.0/12")';

/** Why one entry of a trust-proxy list is not one Express accepts, or null. */
function entryProblem(entry: string): string | null {
  if ((RANGE_NAMES as readonly string[]).includes(entry)) return null;
  const [addr, bits, ...rest] = entry.split('/');
  const family = isIP(addr ?? '');
  if (!family || rest.length) return `"${entry}" is not an address, a CIDR range or a range name`;
  if (bits === undefined) return null;
  const max = family === 4 ? 32 : 128;
  // Express (proxy-addr) refuses a /0 at start-up with a message naming neither the setting nor a remedy.
  if (/^0+$/.test(bits))
    return `"${entry}" trusts every address, so any client could choose its own; name your reverse proxy instead (e.g. TRUST_PROXY=172.18.0.2 or TRUST_PROXY=10.0.0.0/8)`;
  if (!/^\d{1,3}$/.test(bits) || Number(bits) > max) return `"${entry}": the prefix length must be 1-${max}`;
  return null;
}

/**
 * Express `trust proxy`, restricted to what names the proxy: a hop count or a list of addresses, CIDR ranges and
 * range names. `true` (trust any X-Forwarded-For) is refused: any client could then choose its own address.
 */
export const trustProxySchema = z
  .union([z.number(), z.string(), z.array(z.string())])
  .superRefine((value, ctx) => {
    if (typeof value === 'number') {
      if (!Number.isInteger(value) || value < 0)
        ctx.addIssue({ code: 'custom', message: `must be ${TRUST_PROXY_FORMS}` });
      return;
    }
    const entries = (Array.isArray(value) ? value : value.split(',')).map((e) => e.trim());
    if (!entries.length || entries.some((e) => e === '')) {
      ctx.addIssue({ code: 'custom', message: `must be ${TRUST_PROXY_FORMS}` });
      return;
    }
    for (const e of entries) {
      const problem = entryProblem(e);
      if (problem) ctx.addIssue({ code: 'custom', message: `${problem}; it must be ${TRUST_PROXY_FORMS}` });
    }
  })
  .transform((value): TrustProxy => {
    if (typeof value === 'number') return value;
    return (Array.isArray(value) ? value : value.split(',')).map((e) => e.trim()).join(', ');
  });

/** A hop count, or addresses/ranges as Express reads them ("loopback, 10.0.0.0/8"). */
export type TrustProxy = number | string;

/** Who else sits in Express's named ranges: the clients a warning should name. */
const RANGE_MEMBERS: Record<(typeof RANGE_NAMES)[number], string> = {
  loopback: '127.0.0.0/8 and ::1: every program on this host or in this container',
  linklocal: '169.254.0.0/16 and fe80::/10: every device on the local link',
  uniquelocal:
    '10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16 and fc00::/7: every client on the school network or its VPN, and every container',
};

/** A reverse proxy is one machine or a few: a trusted range larger than this holds clients too. */
const NARROW_RANGE_ADDRESSES = 16;

/**
 * One line for the operator when the trusted proxies are a wide range: whatever connects from inside it can write
 * any address into X-Forwarded-For and be counted as that address, so it escapes every throttle at will (Express
 * takes the rightmost address that is not trusted, and a client inside the range is trusted). Null when the
 * setting names single machines or small ranges, or is a hop count (the README says when that is right).
 */
export function trustProxyWarning(trustProxy: TrustProxy | undefined): string | null {
  if (trustProxy === undefined || typeof trustProxy === 'number') return null;
  const wide: string[] = [];
  for (const entry of trustProxy.split(',').map((e) => e.trim())) {
    if ((RANGE_NAMES as readonly string[]).includes(entry)) {
      wide.push(`"${entry}" (${RANGE_MEMBERS[entry as (typeof RANGE_NAMES)[number]]})`);
      continue;
    }
    const [addr = '', bits] = entry.split('/');
    if (bits === undefined) continue;
    const hostBits = (isIP(addr) === 4 ? 32 : 128) - Number(bits);
    if (2 ** hostBits > NARROW_RANGE_ADDRESSES)
      wide.push(`${entry} (${(2 ** hostBits).toLocaleString('en-US')} addresses)`);
  }
  if (!wide.length) return null;
  return `TRUST_PROXY trusts ${wide.join(', ')} to name the client: a client connecting from inside that range can put any address in X-Forwarded-For and escape every throttle (failed sign-ins, unknown feed URLs). Set TRUST_PROXY to your reverse proxy's own address (e.g. TRUST_PROXY=172.18.0.2; README: "Running in production").`;
}

/** TRUST_PROXY as the schema takes it: digits are a hop count. */
export function trustProxyFromEnv(value: string | undefined): number | string | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  return /^\s*\d+\s*$/.test(value) ? Number(value) : value;
}

export interface FeedRateLimit {
  /** Sustained feed requests per second per client. */
  perSecond: number;
  /** Requests a client may make at once. */
  burst: number;
}

/** Off unless set: Google and Microsoft fetch every family's feed from a handful of addresses. */
export const feedRateLimitSchema = z
  .strictObject({
    perSecond: z.number().positive(),
    /** Default: ten seconds' worth. */
    burst: z.number().int().positive().optional(),
  })
  .transform(
    (v): FeedRateLimit => ({
      perSecond: v.perSecond,
      burst: v.burst ?? Math.max(1, Math.ceil(v.perSecond * 10)),
    }),
  );

/** FEED_RATE_LIMIT: `PER_SECOND` or `PER_SECOND,BURST` (e.g. `20,200`); a bad value names the variable. */
export function feedRateLimitFromEnv(
  value: string | undefined,
): { perSecond: number; burst?: number } | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const m = /^\s*(\d+(?:\.\d+)?)\s*(?:,\s*(\d+)\s*)?$/.exec(value);
  if (!m || Number(m[1]) <= 0 || (m[2] !== undefined && Number(m[2]) < 1))
    throw new ConfigError(
      'config: FEED_RATE_LIMIT: must be requests per second per client, optionally with a burst: e.g. "20" or "20,200" (unset: valid feed requests are not limited)',
    );
  return { perSecond: Number(m[1]), ...(m[2] !== undefined ? { burst: Number(m[2]) } : {}) };
}
