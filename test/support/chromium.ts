// Where the tests' Chromium comes from: CHROMIUM_PATH when set, otherwise the headless Chromium that
// @sparticuz/chromium carries inside its npm package, unpacked once per machine (and per package version) into
// the OS temp directory. Nothing is downloaded: the binary, its NSS libraries and its fonts come from
// node_modules.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

export interface ChromiumInstall {
  executablePath: string;
  /** Environment the browser process needs (its libraries, its fonts). */
  env: Record<string, string>;
  /** `CHROMIUM_PATH` or `@sparticuz/chromium`, for messages. */
  source: string;
}

const require = createRequire(import.meta.url);

// build/index.js → the package folder (its exports map hides package.json).
const sparticuzEntry = () => require.resolve('@sparticuz/chromium');
const sparticuzDir = () => join(dirname(sparticuzEntry()), '..');

// The fonts pages may show: Open Sans (from @sparticuz/chromium) and the packages the PDF rosters already use
// (DejaVu for Latin, Greek, Cyrillic, Arabic; Noto for Chinese, Japanese, Korean, Thai, Devanagari). The machine's
// own fonts are left out, so that every machine renders the same.
function fontDirs(unpacked: string): string[] {
  const dirs = [join(unpacked, 'fonts', 'fonts')];
  const tryDir = (find: () => string) => {
    try {
      const dir = find();
      if (existsSync(dir)) dirs.push(dir);
    } catch {
      // Not installed: pages simply lack that script.
    }
  };
  tryDir(() => join(dirname(require.resolve('dejavu-fonts-ttf/package.json')), 'ttf'));
  // The @embedpdf packages export only their JS entry; the fonts sit beside its dist folder.
  for (const pkg of ['@embedpdf/fonts-sc', '@embedpdf/fonts-jp', '@embedpdf/fonts-kr'])
    tryDir(() => join(dirname(require.resolve(pkg)), '..', 'fonts'));
  for (const pkg of ['@expo-google-fonts/noto-sans-thai', '@expo-google-fonts/noto-sans-devanagari'])
    tryDir(() => dirname(require.resolve(`${pkg}/package.json`)));
  return dirs;
}

/**
 * A fontconfig file naming this checkout's font folders. The unpacked Chromium is shared by every checkout on the
 * machine, so each checkout gets its own file (named by a hash of its folders), written atomically.
 */
function writeFontsConf(unpacked: string): string {
  const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
  const dirs = fontDirs(unpacked);
  const text = [
    '<?xml version="1.0"?>',
    '<!DOCTYPE fontconfig SYSTEM "fonts.dtd">',
    '<fontconfig>',
    ...dirs.map((d) => `  <dir>${esc(d)}</dir>`),
    `  <cachedir>${esc(join(unpacked, 'fonts-cache'))}</cachedir>`,
    '</fontconfig>',
    '',
  ].join('\n');
  const file = join(unpacked, `fonts-${createHash('sha256').update(text).digest('hex').slice(0, 16)}.conf`);
  if (!existsSync(file)) {
    const tmp = `${file}.${process.pid}`;
    writeFileSync(tmp, text);
    renameSync(tmp, file);
  }
  return file;
}

function run(file: string, args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { env, maxBuffer: 1 << 20 }, (err, stdout, stderr) =>
      err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout),
    );
  });
}

/**
 * Unpacks @sparticuz/chromium's brotli archives into a directory of its own. The package always unpacks into
 * os.tmpdir(), so a child process does it with TMPDIR pointing at a staging directory, which is then renamed into
 * place: concurrent runs (other test runs, other users of the machine) never see half a binary.
 */
async function unpack(): Promise<string> {
  const pkg = sparticuzDir();
  const version = (JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')) as { version: string })
    .version;
  const target = join(tmpdir(), `rostercal-chromium-${version}-${userInfo().uid}`);
  if (existsSync(join(target, '.complete'))) return target;
  const staging = `${target}.${process.pid}.${Date.now().toString(36)}`;
  mkdirSync(staging, { recursive: true });
  try {
    const script = [
      "import { join } from 'node:path';",
      `import chromium, { inflate } from ${JSON.stringify(pathToFileURL(sparticuzEntry()).href)};`,
      'await chromium.executablePath();',
      // Its NSS and expat libraries: a bare machine has none (the package adds them itself only on Amazon Linux).
      `await inflate(join(${JSON.stringify(join(pkg, 'bin'))}, 'al2023.tar.br'));`,
    ].join('\n');
    await run(process.execPath, ['--input-type=module', '-e', script], { ...process.env, TMPDIR: staging });
    writeFileSync(join(staging, '.complete'), `${version}\n`);
    try {
      renameSync(staging, target);
    } catch (err) {
      // Another run finished first: use its copy.
      if (!existsSync(join(target, '.complete'))) throw err;
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return target;
}

/** CHROMIUM_PATH, or the npm package's Chromium (unpacked on first use). Throws naming the component. */
export async function installChromium(env: NodeJS.ProcessEnv = process.env): Promise<ChromiumInstall> {
  if (env.CHROMIUM_PATH) {
    if (!existsSync(env.CHROMIUM_PATH))
      throw new Error(`Chromium: CHROMIUM_PATH=${env.CHROMIUM_PATH} does not exist`);
    return { executablePath: env.CHROMIUM_PATH, env: {}, source: 'CHROMIUM_PATH' };
  }
  let dir: string;
  try {
    dir = await unpack();
  } catch (err) {
    throw new Error(
      `Chromium (@sparticuz/chromium) could not be unpacked into ${tmpdir()}: ${(err as Error).message}\n` +
        'Run `npm install` again, or set CHROMIUM_PATH to a Chromium binary.',
    );
  }
  return {
    executablePath: join(dir, 'chromium'),
    env: {
      LD_LIBRARY_PATH: [join(dir, 'al2023', 'lib'), env.LD_LIBRARY_PATH].filter(Boolean).join(':'),
      FONTCONFIG_FILE: writeFontsConf(dir),
    },
    source: '@sparticuz/chromium',
  };
}
