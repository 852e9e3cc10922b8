// What every part of the configuration shares when it validates (src/validation.ts): zod issues as lines naming
// the field as a person writes it, URL fields that never echo a URL (it may carry credentials), `env:NAME` secrets.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  ConfigError,
  configError,
  formatPath,
  httpsUrl,
  httpUrl,
  issueProblem,
  type Problem,
  resolveSecret,
} from '../src/validation.ts';

const problemsOf = (schema: z.ZodType, value: unknown, base: PropertyKey[] = []) => {
  const r = schema.safeParse(value);
  return r.success ? [] : r.error.issues.map((i) => issueProblem(i, base));
};

describe('issues as problems', () => {
  it('writes a path as a person would', () => {
    expect(formatPath(['schools', 0, 'upstream', 'url'])).toBe('schools[0].upstream.url');
    expect(formatPath([0, 'id'])).toBe('[0].id');
    expect(formatPath([])).toBe('');
  });

  it('names unknown fields, missing ones and the rest, under a base path', () => {
    const school = z.strictObject({ id: z.string(), port: z.number() });
    expect(problemsOf(school, { id: 'a', port: 1, colour: 'x', size: 2 }, ['schools', 1])).toEqual([
      { path: 'schools[1].colour, schools[1].size', message: 'unknown fields' },
    ]);
    expect(problemsOf(school, { id: 'a', port: 1, colour: 'x' })).toEqual([
      { path: 'colour', message: 'unknown field' },
    ]);
    expect(problemsOf(school, { port: 'x' })).toEqual([
      { path: 'id', message: 'is required' },
      { path: 'port', message: 'expected number, received string' },
    ]);
  });

  it('makes one error of every problem, each line once, closed by the file', () => {
    const problems: Problem[] = [
      { path: 'a', message: 'is required' },
      { path: '', message: 'is not an object' },
      { path: 'a', message: 'is required' },
    ];
    const err = configError(problems, '/etc/rostercal.json');
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.name).toBe('ConfigError');
    expect(err.message).toBe('config: a: is required\nconfig: is not an object\n(in /etc/rostercal.json)');
    expect(configError(problems).message).toBe('config: a: is required\nconfig: is not an object');
  });
});

describe('URL fields', () => {
  it('takes http(s) URLs and refuses others without echoing them', () => {
    expect(problemsOf(httpUrl, 'https://api.example.test/v1')).toEqual([]);
    expect(problemsOf(httpUrl, 'http://127.0.0.1:8080')).toEqual([]);
    for (const bad of ['ftp://example.test', 'file:///etc/passwd', 'javascript:alert(1)', 'not a url'])
      expect(problemsOf(httpUrl, bad)).toEqual([{ path: '', message: 'is not an http(s) URL' }]);
    const withCredentials = problemsOf(httpUrl, 'https://admin:hunter2@api.example.test');
    expect(withCredentials[0]?.message).toMatch(/must not carry a user name or password/);
    expect(JSON.stringify(withCredentials)).not.toContain('hunter2');
  });

  it('takes only https where credentials go to Microsoft', () => {
    expect(problemsOf(httpsUrl, 'https://login.example.test')).toEqual([]);
    expect(problemsOf(httpsUrl, 'http://login.example.test')[0]?.message).toMatch(
      /must be an https:\/\/ URL/,
    );
    expect(problemsOf(httpsUrl, 'https://user@login.example.test')[0]?.message).toMatch(
      /user name or password/,
    );
  });
});

describe('resolveSecret', () => {
  it('reads env:NAME from the environment, and records a missing variable without its value', () => {
    const problems: Problem[] = [];
    expect(resolveSecret('literal-token', {}, 'token', problems)).toBe('literal-token');
    expect(resolveSecret('env:UPSTREAM_TOKEN', { UPSTREAM_TOKEN: 's3cret' }, 'token', problems)).toBe(
      's3cret',
    );
    expect(resolveSecret('env:MISSING', { OTHER: 'x' }, 'schools[0].token', problems)).toBe('');
    expect(resolveSecret('env:EMPTY', { EMPTY: '' }, 'key', problems)).toBe('');
    expect(problems).toEqual([
      { path: 'schools[0].token', message: 'environment variable MISSING is not set' },
      { path: 'key', message: 'environment variable EMPTY is not set' },
    ]);
  });
});
