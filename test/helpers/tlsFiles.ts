import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';

export interface TlsFiles {
  /** The private CA that signed the server certificate: what a client must trust. */
  ca: string;
  cert: string;
  key: string;
}

function openssl(dir: string, args: string[]): void {
  const run = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
  if (run.error || run.status !== 0)
    throw new Error(
      `openssl ${args[0]} failed (${run.error?.message ?? run.stderr}): install openssl (apt-get install -y openssl)`,
    );
}

/**
 * A throwaway CA and a server certificate it signed for 127.0.0.1 (as an IP subject alternative
 * name, which Node checks), written into `dir`.
 */
export function makeTlsFiles(dir: string): TlsFiles {
  const files = {
    ca: path.join(dir, 'ca.pem'),
    cert: path.join(dir, 'server.pem'),
    key: path.join(dir, 'server.key'),
  };
  const days = ['-days', '2'];
  openssl(dir, [
    ...['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key'],
    ...['-out', files.ca, '-subj', '/CN=dgs test CA', ...days],
  ]);
  openssl(dir, [
    ...['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', files.key],
    ...['-out', 'server.csr', '-subj', '/CN=127.0.0.1'],
  ]);
  writeFileSync(path.join(dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1\n');
  openssl(dir, [
    ...['x509', '-req', '-in', 'server.csr', '-CA', files.ca, '-CAkey', 'ca.key'],
    ...['-CAcreateserial', '-out', files.cert, '-extfile', 'san.ext', ...days],
  ]);
  return files;
}
