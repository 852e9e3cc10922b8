// Query-string encoding per the spec: array parameters are stringified JSON arrays (`activityIds=[1,2]`),
// booleans `true`/`false`, absent values omitted.

export type QueryValue = string | number | boolean | readonly (string | number)[] | null | undefined;

export function encodeQuery(params: Readonly<Record<string, QueryValue>>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined || value === null) continue;
    search.append(key, Array.isArray(value) ? JSON.stringify(value) : String(value));
  }
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
}
