/**
 * Running `npm run demo` in tests: the compiled demo (dist/cli/demo.js, built by `npm test`) as a
 * process of its own, and its printed curl commands run exactly as printed.
 */
import { execFile, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { promisify } from 'node:util';
import { spawnEntry, type ServiceProcess } from './processes.js';

const run = promisify(execFile);
export const hasCurl = !spawnSync('curl', ['--version']).error;

/** Starts dist/cli/demo.js with these arguments and this environment only. */
export const spawnDemo = (env: Record<string, string>, args: string[] = []): ServiceProcess =>
  spawnEntry('cli/demo.js', env, args);

/** Starts the demo and waits for its last line; everything it printed is in `stdout`. */
export async function startDemo(
  env: Record<string, string>,
  args: string[] = [],
  timeoutMs = 30_000,
): Promise<ServiceProcess> {
  const demo = spawnDemo(env, args);
  const deadline = Date.now() + timeoutMs;
  while (!demo.stdout.some((line) => line.startsWith('Stop with'))) {
    if (Date.now() > deadline || demo.child.exitCode !== null) {
      demo.child.kill('SIGKILL');
      // A process's last lines can arrive after its exit: quote them once its output has closed.
      if (demo.child.stdout?.readable || demo.child.stderr?.readable)
        await Promise.race([once(demo.child, 'close'), new Promise((r) => setTimeout(r, 2_000))]);
      throw new Error(
        `the demo did not get ready. stdout:\n${demo.stdout.join('\n')}\nstderr:\n${demo.stderr.join('\n')}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return demo;
}

/** What the demo printed: its API key, its API's base URL and its three curl commands. */
export function printed(demo: ServiceProcess) {
  const text = demo.stdout.join('\n');
  return {
    commands: demo.stdout.filter((line) => line.startsWith('curl ')),
    apiKey: /API key\s+(\S+)/.exec(text)?.[1] ?? '',
    apiUrl: /API\s+(http\S+)\/api\/v1/.exec(text)?.[1] ?? '',
  };
}

/** Splits a shell command line: words, 'single quoted' parts (with '\'' for a quote), \x. */
export function shellWords(command: string): string[] {
  const words: string[] = [];
  let word: string | null = null;
  for (let i = 0; i < command.length; i += 1) {
    const char = command[i]!;
    if (char === "'") {
      const end = command.indexOf("'", i + 1);
      if (end === -1) throw new Error(`unterminated quote in: ${command}`);
      word = (word ?? '') + command.slice(i + 1, end);
      i = end;
    } else if (char === '\\') {
      word = (word ?? '') + (command[i + 1] ?? '');
      i += 1;
    } else if (char === ' ') {
      if (word !== null) words.push(word);
      word = null;
    } else {
      word = (word ?? '') + char;
    }
  }
  if (word !== null) words.push(word);
  return words;
}

export interface CurlRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
  include: boolean;
  /** `-o`: the file curl writes the answer to. */
  output?: string;
}

export function parseCurl(command: string): CurlRequest {
  const [program, ...args] = shellWords(command);
  expect(program).toBe('curl');
  const request: CurlRequest = {
    method: 'GET',
    url: '',
    headers: {},
    body: undefined,
    include: false,
  };
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i]!;
    if (arg === '-X') request.method = args[++i]!;
    else if (arg === '-H') {
      const header = args[++i]!;
      const colon = header.indexOf(':');
      request.headers[header.slice(0, colon).trim().toLowerCase()] = header.slice(colon + 1).trim();
    } else if (arg === '-d') request.body = args[++i]!;
    else if (arg === '-i') request.include = true;
    else if (arg === '-o') request.output = args[++i]!;
    else if (arg === '-sS') continue;
    else if (arg.startsWith('-')) throw new Error(`unexpected curl option ${arg} in: ${command}`);
    else request.url = arg;
  }
  if (request.body !== undefined && request.method === 'GET') request.method = 'POST';
  return request;
}

export interface Answer {
  status: number;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

/** Runs a printed command: with curl in a shell when there is one, else the same call by fetch. */
export async function execute(command: string): Promise<Answer> {
  const request = parseCurl(command);
  if (!hasCurl) {
    const response = await fetch(request.url, {
      method: request.method,
      headers: request.headers,
      body: request.body,
    });
    return {
      status: response.status,
      headers: Object.fromEntries(response.headers),
      body: (await response.json()) as Record<string, unknown>,
    };
  }
  // curl prints the status line and headers only with -i; add -w for the status otherwise.
  const { stdout } = await run('sh', [
    '-c',
    request.include ? command : `${command} -w '\\n%{http_code}'`,
  ]);
  if (request.include) {
    const [head, ...rest] = stdout.split('\r\n\r\n');
    const [statusLine, ...headerLines] = head!.split('\r\n');
    const headers = Object.fromEntries(
      headerLines.map((line) => [
        line.slice(0, line.indexOf(':')).toLowerCase(),
        line.slice(line.indexOf(':') + 1).trim(),
      ]),
    );
    return {
      status: Number(statusLine!.split(' ')[1]),
      headers,
      body: JSON.parse(rest.join('\r\n\r\n')) as Record<string, unknown>,
    };
  }
  const newline = stdout.lastIndexOf('\n');
  return {
    status: Number(stdout.slice(newline + 1)),
    headers: {},
    body: JSON.parse(stdout.slice(0, newline)) as Record<string, unknown>,
  };
}
