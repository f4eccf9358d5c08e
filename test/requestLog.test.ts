import express from 'express';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { requestId } from '../api/middleware/requestId.js';
import { requestLog } from '../api/middleware/requestLog.js';
import { waitFor } from './helpers/wait.js';

/** An app that logs into `lines`, with one route answering 200 and one answering 503. */
async function serve(level: string, lines: Array<Record<string, unknown>>) {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  const app = express();
  app.use(requestId, requestLog(pino({ level }, sink)));
  app.get('/ok', (_req, res) => {
    // As routeLabels names the route of an /api/v1 request.
    res.locals.route = '/ok';
    res.json({ ok: true });
  });
  app.get('/down', (_req, res) => void res.status(503).json({ ok: false }));
  const server = app.listen(0);
  await new Promise((resolve) => server.once('listening', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, close: () => new Promise((resolve) => server.close(resolve)) };
}

describe('request log', () => {
  test('one line per request, with its Request-Id, method, route, query parameter names, status and time', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const app = await serve('info', lines);
    try {
      const ok = await fetch(`${app.url}/ok?limit=5`);
      const down = await fetch(`${app.url}/down`);
      await waitFor(() => lines.length >= 2);
      expect(lines).toEqual([
        expect.objectContaining({
          level: 30,
          msg: 'request completed',
          reqId: ok.headers.get('Request-Id'),
          req: { method: 'GET', route: '/ok', params: ['limit'] },
          res: { statusCode: 200 },
          responseTime: expect.any(Number),
        }),
        expect.objectContaining({
          level: 50,
          msg: 'request errored',
          reqId: down.headers.get('Request-Id'),
          res: { statusCode: 503 },
        }),
      ]);
    } finally {
      await app.close();
    }
  });

  test('at level warn only 5xx answers are logged', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const app = await serve('warn', lines);
    try {
      await fetch(`${app.url}/ok`);
      await fetch(`${app.url}/down`);
      await fetch(`${app.url}/ok`);
      await fetch(`${app.url}/down`);
      await waitFor(() => lines.length >= 2);
      expect(lines.map((line) => line.res)).toEqual([{ statusCode: 503 }, { statusCode: 503 }]);
    } finally {
      await app.close();
    }
  });
});
