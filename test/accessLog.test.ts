import express from 'express';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { accessLog } from '../api/middleware/accessLog.js';

/** An app logging at `level` into `lines`, answering 200 on /ok and 503 on /down. */
async function serve(level: string, lines: Record<string, unknown>[]) {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  const app = express();
  app.use((_req, res, next) => {
    res.locals.requestId = 'req_test';
    next();
  });
  app.use(accessLog(pino({ level }, sink)));
  app.get('/ok', (_req, res) => void res.json({ ok: true }));
  app.get('/down', (_req, res) => void res.status(503).json({ ok: false }));
  const server = app.listen(0);
  await new Promise((resolve) => server.once('listening', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, close: () => new Promise((resolve) => server.close(resolve)) };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

describe('access log', () => {
  it('logs every request at info, with its request id, method, path and status', async () => {
    const lines: Record<string, unknown>[] = [];
    const app = await serve('info', lines);
    await fetch(`${app.url}/ok?x=1`);
    await settle();
    await app.close();
    expect(lines).toEqual([
      expect.objectContaining({
        level: 30,
        msg: 'request completed',
        requestId: 'req_test',
        req: { method: 'GET', url: '/ok?x=1' },
        res: { statusCode: 200 },
      }),
    ]);
  });

  it('at warn, logs only the responses that failed on the server side', async () => {
    const lines: Record<string, unknown>[] = [];
    const app = await serve('warn', lines);
    await fetch(`${app.url}/ok`);
    await fetch(`${app.url}/down`);
    await settle();
    await app.close();
    expect(lines).toEqual([
      expect.objectContaining({
        level: 50,
        msg: 'request errored',
        req: { method: 'GET', url: '/down' },
        res: { statusCode: 503 },
      }),
    ]);
  });
});
