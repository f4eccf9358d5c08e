/**
 * The list benchmark's baseline: a bare Express handler answering GET /gifts with the first
 * page's SQL (the statement the API runs, given as BENCH_PAGE_SQL and BENCH_PAGE_VALUES) and the
 * rows as JSON: no authentication, validation, cursors or presentation. Run as its own process
 * by bench/lists.ts, beside the API's.
 */
import express from 'express';
import pg from 'pg';

const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL,
  max: Number(process.env.BENCH_POOL_SIZE ?? 10),
});
const text = process.env.BENCH_PAGE_SQL ?? '';
const values = JSON.parse(process.env.BENCH_PAGE_VALUES ?? '[]') as unknown[];
const app = express();
app.get('/gifts', async (_req, res) => {
  const { rows } = await pool.query(text, values);
  res.json(rows);
});
const server = app.listen(Number(process.env.PORT));
process.on('SIGTERM', () => server.close(() => void pool.end().then(() => process.exit(0))));
