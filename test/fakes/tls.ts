// A throw-away self-signed certificate for the fake Graph (the Graph SDK sends its token only to https hosts),
// and a way for the test process to trust it.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';

export interface SelfSignedCert {
  key: string;
  cert: string;
  /** A file holding the certificate, for NODE_EXTRA_CA_CERTS in child processes. */
  caFile: string;
  dispose(): void;
}

/** Needs the `openssl` binary (present wherever Node's tests run here); throws a clear error if it is missing. */
export function createSelfSignedCert(hosts: string[] = ['localhost', '127.0.0.1']): SelfSignedCert {
  const dir = mkdtempSync(join(tmpdir(), 'rostercal-fake-tls-'));
  const san = hosts.map((h) => (/^[\d.]+$/.test(h) ? `IP:${h}` : `DNS:${h}`)).join(',');
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
        '-days',
        '2',
        '-subj',
        '/CN=rostercal fake graph',
        '-addext',
        `subjectAltName=${san}`,
      ],
      { stdio: 'pipe' },
    );
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(
      `cannot create a self-signed certificate for the fake Graph (is openssl installed?): ${err}`,
    );
  }
  const key = readFileSync(join(dir, 'key.pem'), 'utf8');
  const cert = readFileSync(join(dir, 'cert.pem'), 'utf8');
  const caFile = join(dir, 'ca.pem');
  writeFileSync(caFile, cert);
  return { key, cert, caFile, dispose: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Makes this process trust `certPem` for every TLS client (https, fetch): what NODE_EXTRA_CA_CERTS does for a
 * new process, done at run time (Node ≥ 22.19 / 24.5).
 */
export function trustCertificate(certPem: string): void {
  const current = tls.getCACertificates('default');
  if (!current.includes(certPem)) tls.setDefaultCACertificates([...current, certPem]);
}
