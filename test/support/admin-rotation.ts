// POST /admin/feeds/rotate as automation sends it (the ADMIN_TOKEN bearer, no session, no CSRF form token):
// the answer after the redirect to the rotated page, and the new page's token when it names one.
export async function rotateAsAdmin(
  base: string,
  adminToken: string,
  feed: { school: string; scope: string; id: number },
): Promise<{ res: Response; page: string; token: string | null }> {
  const res = await fetch(`${base}/admin/feeds/rotate`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${adminToken}`,
      'Content-Type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({ school: feed.school, scope: feed.scope, id: String(feed.id) }).toString(),
  });
  const page = await res.text();
  return { res, page, token: /\/feeds\/([\w-]{32})"/.exec(page)?.[1] ?? null };
}

/**
 * rotateAsAdmin, timed: its status, page and how long it took; status 0 when no answer came within `hangMs` (a
 * request that waits on a held store).
 */
export async function rotateTimed(
  base: string,
  adminToken: string,
  feed: { school: string; scope: string; id: number },
  hangMs: number,
): Promise<{ status: number; page: string; ms: number }> {
  const began = performance.now();
  try {
    const res = await fetch(`${base}/admin/feeds/rotate`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${adminToken}`, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ school: feed.school, scope: feed.scope, id: String(feed.id) }).toString(),
      signal: AbortSignal.timeout(hangMs),
    });
    const page = await res.text();
    return { status: res.status, page, ms: performance.now() - began };
  } catch (err) {
    if ((err as Error).name !== 'TimeoutError') throw err;
    return { status: 0, page: '', ms: performance.now() - began };
  }
}
