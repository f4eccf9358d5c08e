/**
 * Stops a server when the process that started it dies without stopping it (Ctrl+C on a test
 * run, SIGKILL, a crash): `node reaper.js <pid> <signal> [directory …]`. It waits for its standard
 * input to close; a line "done" before that means the server was stopped properly. Otherwise it
 * sends the signal to the server, SIGKILL after 15 s, and removes the directories.
 */
import { rmSync } from 'node:fs';

const [pidArg, signal, ...dirs] = process.argv.slice(2);
const pid = Number(pidArg);
let released = false;
let input = '';

const alive = () => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk: string) => {
  input += chunk;
  if (input.split('\n').includes('done')) released = true;
});
process.stdin.on('end', () => void reap());
process.stdin.on('error', () => void reap());
// Ctrl+C reaches this process's group only if it was started in the terminal's; ignore it here.
process.on('SIGINT', () => undefined);
process.on('SIGTERM', () => undefined);

async function reap(): Promise<void> {
  if (!released && Number.isInteger(pid) && pid > 0) {
    try {
      process.kill(pid, (signal ?? 'SIGTERM') as NodeJS.Signals);
    } catch {
      // already gone
    }
    for (let i = 0; i < 150 && alive(); i += 1) await new Promise((r) => setTimeout(r, 100));
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // the group is gone
    }
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
  process.exit(0);
}
