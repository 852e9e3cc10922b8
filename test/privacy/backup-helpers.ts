// What the backup and restore tests (SQLite, PostgreSQL) share: real CLI runs, the bytes a URL answers, a family
// link made over HTTP.
import { expect } from 'vitest';
import { rostercal } from '../support/cli.ts';
import { type PrivacySchool, tokenOf } from './served.ts';

/** The calendar a feed or family URL answers (its `.ics`), on the server at `base`. */
export async function bytes(base: string, url: string): Promise<{ status: number; body: Buffer }> {
  const res = await fetch(`${base}${new URL(url, base).pathname.replace(/(\.ics)?$/, '.ics')}`);
  return { status: res.status, body: Buffer.from(await res.arrayBuffer()) };
}

/** Runs a command to its end, expecting `exit`; its output. */
export async function cli(args: string[], env: Record<string, string>, exit = 0): Promise<string> {
  const c = rostercal(args, env);
  expect(await c.exit, c.output()).toBe(exit);
  return c.output();
}

export async function feedsList(env: Record<string, string>): Promise<PrivacySchool['feeds']> {
  const list = rostercal(['feeds', 'list', '--json'], env);
  expect(await list.exit, list.output()).toBe(0);
  return JSON.parse(list.stdout()) as PrivacySchool['feeds'];
}

/** A family link of two feeds (a URL and a page), made as a family makes it; its path. */
export async function familyLink(base: string, a: string, b: string): Promise<string> {
  const res = await fetch(`${base}/family`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ from: tokenOf(a), links: b }).toString(),
    redirect: 'manual',
  });
  expect(res.status, await res.text()).toBe(303);
  return new URL(res.headers.get('location')!, base).pathname;
}
