// bench:sync's floor, a process of its own with no imports to load, in plain JavaScript (Node loads no type
// stripper for it): the requests a full sync made (argv: JSON {url, token, requests}), fetched and parsed and
// nothing else. Pages one after another, as a listing is paged; a run of single-team reads as many at once as
// the pull makes them.

/** The pull's single-team reads in flight at once (school.pull.teamConcurrency's default). */
const TEAM_CONCURRENCY = 4;

/** @typedef {{ url: string, token: string, requests: string[] }} FloorArgs */

const TEAM_READ = /\/teams\/\d+(\?|$)/;

/** @param {FloorArgs} a */
async function floor(a) {
  const origin = new URL(a.url).origin;
  const headers = { authorization: `Bearer ${a.token}`, accept: 'application/json' };
  /** @param {string} p */
  const get = async (p) => {
    const res = await fetch(origin + p, { headers });
    if (!res.ok) throw new Error(`floor: ${p} answered ${res.status}`);
    return await res.json();
  };
  let i = 0;
  while (i < a.requests.length) {
    const p = a.requests[i];
    if (!TEAM_READ.test(p)) {
      await get(p);
      i++;
      continue;
    }
    let j = i;
    while (j < a.requests.length && TEAM_READ.test(a.requests[j])) j++;
    const batch = a.requests.slice(i, j);
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(TEAM_CONCURRENCY, batch.length) }, async () => {
        while (next < batch.length) await get(batch[next++]);
      }),
    );
    i = j;
  }
}

await floor(JSON.parse(process.argv[2]));
