// The operator's view of imports: rows done by phase and outcome on the worker's /metrics.
import { startTestService, type TestService } from './helpers/harness.js';
import { settled, upload } from './helpers/imports.js';
import { freePort } from './helpers/processes.js';
import { created } from './helpers/responses.js';

let service: TestService;
let workerMetricsPort: number;

beforeAll(async () => {
  workerMetricsPort = await freePort();
  service = await startTestService({ WORKER_METRICS_PORT: String(workerMetricsPort) });
});

afterAll(async () => {
  await service?.close();
});

const counter = (text: string, phase: string, outcome: string) => {
  const match = new RegExp(
    `^import_rows_total\\{phase="${phase}",outcome="${outcome}"\\} (\\S+)$`,
    'm',
  ).exec(text);
  return match ? Number(match[1]) : 0;
};

test('import_rows_total counts the rows judged and written, by outcome', async () => {
  const donor = await created<{ id: number }>(
    service.call('POST', '/api/v1/donors', {
      body: { role: 'Individual', first_name: 'Ada', last_name: 'L', email: 'ada@example.org' },
    }),
  );
  const csv =
    'donor_id,amount,gift_date,subject\n' +
    `${donor.id},10,2026-02-01,First\n` +
    `${donor.id},not money,2026-02-01,Bad\n` +
    `${donor.id},20,2026-02-02,Second\n`;
  const answer = await upload(service, 'resource=gifts', csv);
  expect(answer.status).toBe(202);
  expect(await settled(service, answer.body.id)).toMatchObject({
    status: 'completed',
    rows_succeeded: 2,
    rows_failed: 1,
  });

  const text = await (await fetch(`http://127.0.0.1:${workerMetricsPort}/metrics`)).text();
  expect(text).toMatch(/^# TYPE import_rows_total counter$/m);
  expect(counter(text, 'validate', 'succeeded')).toBe(2);
  expect(counter(text, 'validate', 'failed')).toBe(1);
  expect(counter(text, 'import', 'succeeded')).toBe(2);
  expect(counter(text, 'import', 'failed')).toBe(0);
});
