// The V8 flags rostercal runs with, read from bin/rostercal.js's first line (`#!/usr/bin/env -S node <flags>`), so
// a benchmark measures the product as it runs.
import { readFileSync } from 'node:fs';
import path from 'node:path';

export function rostercalNodeFlags(): string[] {
  const shebang = readFileSync(path.join(import.meta.dirname, '../../bin/rostercal.js'), 'utf8').split(
    '\n',
  )[0]!;
  const flags = shebang.replace(/^#!\/usr\/bin\/env -S node/, '').trim();
  return flags === '' ? [] : flags.split(/\s+/);
}
