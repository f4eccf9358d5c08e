/**
 * The write benchmark's baseline: a bare Express handler inserting the same gift row with pg,
 * with no auth, validation, queue or idempotency. Run as its own process by bench/writes.ts.
 */
import express from 'express';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 20 });
const institutionId = Number(process.env.BENCH_INSTITUTION_ID);
const app = express();
app.use(express.json());
app.post('/gifts', async (req, res) => {
  const body = req.body as { donor_id: number; amount: number; subject: string; gift_date: string };
  const { rows } = await pool.query(
    `INSERT INTO gifts (institution_id, donor_id, amount, currency, subject, gift_date, type)
     VALUES ($1, $2, $3, 'USD', $4, $5, 'cash') RETURNING id`,
    [institutionId, body.donor_id, body.amount, body.subject, body.gift_date],
  );
  res.status(201).json({ id: rows[0].id });
});
const server = app.listen(Number(process.env.PORT));
process.on('SIGTERM', () => server.close(() => void pool.end().then(() => process.exit(0))));
