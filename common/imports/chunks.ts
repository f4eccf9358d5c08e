import { liveKey } from '../auth/liveKey.js';
import { insertEvents } from '../events/outbox.js';
import {
  sql,
  type CommonQueryMethods,
  type FragmentSqlToken,
  type DatabasePool,
  type DatabaseTransactionConnection,
} from 'slonik';
import { z } from 'zod';
import type { Institution } from '../commands/command.js';
import { findInstitution } from '../institutions.js';
import type { JsonValue } from '../json.js';
import { donorRoles } from '../resources/donors/schema.js';
import { cellOfFile, findFile, findImport, importColumns } from './queries.js';
import {
  insertRecordEvents,
  insertRowErrors,
  insertRowDuplicates,
  prepareChunk,
  readAhead,
  runRow,
  writeBatched,
  type RowOutcome,
} from './rows.js';
import { importRow, presentImport, runningStatuses, type ImportRow } from './schema.js';

/**
 * The workers' part of an import, one chunk per transaction: the chunk's rows, their errors, the
 * records and their events, the chunk's done mark and the import's counts commit together or not
 * at all. A chunk whose job dies mid-way is judged or written again from scratch by the next
 * delivery, and a chunk already marked is never touched again: every row is written exactly once.
 */
export type Phase = 'judge' | 'write';

/** A row of a chunk written without savepoints failed: the chunk's rows run again, one by one. */
class Redo extends Error {
  constructor() {
    super('a row failed: run the chunk row by row');
  }
}

/** The import moved on (cancelled) while the chunk ran: everything of the chunk rolls back. */
class Stopped extends Error {
  constructor() {
    super('import no longer running');
  }
}

/**
 * The API key that created the import was revoked: the chunk rolls back, as any write on a
 * revoked key does, and the import fails (failWithRevokedKey).
 */
class KeyRevoked extends Error {
  constructor() {
    super('the import api key was revoked');
  }
}

const chunkRow = z.object({ first_row: z.number(), rows: z.array(z.json()) });

const count = (outcomes: RowOutcome[], kind: RowOutcome['kind']) =>
  outcomes.filter((outcome) => outcome.kind === kind).length;

async function institutionOf(db: DatabaseTransactionConnection, id: number): Promise<Institution> {
  // Under the lock a change of currency waits for (see baseCurrency): the chunk's gifts are
  // judged and written in the base currency it reads here.
  const found = await findInstitution(db, id, sql.fragment`FOR KEY SHARE`);
  if (!found) throw new Error(`institution ${id} is gone`);
  return { id: found.id, name: found.name, currency: found.currency };
}

/** What a chunk's commit counted of its rows. */
export interface ChunkTally {
  succeeded: number;
  skipped: number;
  failed: number;
}

/**
 * Judges (phase `judge`) or writes (`write`) one chunk; a no-op when it is done already (or the
 * import moved on). Answers what it committed, null for a no-op.
 */
export async function runChunk(
  pool: DatabasePool,
  ref: { institutionId: number; importId: number; chunk: number; phase: Phase },
): Promise<ChunkTally | null> {
  const status = ref.phase === 'judge' ? 'validating' : 'importing';
  const mark = sql.identifier([ref.phase === 'judge' ? 'validated_at' : 'imported_at']);
  try {
    return await pool.transaction(async (db): Promise<ChunkTally | null> => {
      const imp = await findImport(db, ref.institutionId, ref.importId);
      if (imp?.status !== status) return null;
      const chunk = await db.maybeOne(sql.type(chunkRow)`
        SELECT first_row, rows FROM import_chunks
        WHERE institution_id = ${ref.institutionId} AND file_id = ${imp.file_id}
          AND chunk = ${ref.chunk} AND ${mark} IS NULL
        FOR UPDATE`);
      if (!chunk) return null;
      const file = await findFile(db, ref.institutionId, imp.file_id);
      if (!file) throw new Error(`import ${imp.id} lost its file`);
      const institution = await institutionOf(db, ref.institutionId);
      const outcomes =
        ref.phase === 'judge'
          ? await judge(db, institution, imp, file, chunk)
          : await write(db, institution, imp, file, chunk);
      const failed = outcomes.filter((outcome) => outcome.kind === 'failed');
      const tally = {
        succeeded: count(outcomes, 'written'),
        skipped: count(outcomes, 'skipped'),
        failed: failed.length,
      };
      await insertRowErrors(db, imp, failed);
      await db.query(sql.unsafe`
        UPDATE import_chunks SET ${mark} = now()
        WHERE institution_id = ${ref.institutionId} AND file_id = ${imp.file_id}
          AND chunk = ${ref.chunk}`);
      // The last statement: a cancel that committed meanwhile makes it match nothing, and the
      // chunk commits only while the import's API key is live, as every write does (liveKey).
      const counted = await db.maybeOne(sql.type(z.object({ key_live: z.boolean() }))`
        UPDATE imports
        SET rows_processed = rows_processed + ${chunk.rows.length},
            rows_succeeded = rows_succeeded + ${tally.succeeded},
            rows_skipped = rows_skipped + ${tally.skipped},
            rows_failed = rows_failed + ${tally.failed},
            updated_at = now()
        WHERE institution_id = ${ref.institutionId} AND id = ${imp.id} AND status = ${status}
        RETURNING ${liveKey(imp.api_key_id)} AS key_live`);
      if (counted === null) throw new Stopped();
      if (!counted.key_live) throw new KeyRevoked();
      return tally;
    });
  } catch (error) {
    if (error instanceof KeyRevoked) await failWithRevokedKey(pool, ref);
    else if (!(error instanceof Stopped)) throw error;
    return null;
  }
}

/**
 * An import whose API key is no longer live fails, and says how far it got: what committed
 * before the revocation stays (as after a cancel); nothing commits after it.
 */
async function failWithRevokedKey(
  pool: DatabasePool,
  ref: { institutionId: number; importId: number },
): Promise<void> {
  await pool.transaction(async (db) => {
    const imp = await findImport(db, ref.institutionId, ref.importId, sql.fragment`FOR UPDATE`);
    if (!imp || !runningStatuses.includes(imp.status)) return;
    const progress =
      imp.status === 'importing'
        ? `while importing, after ${imp.rows_processed} of ${imp.rows_total} rows (${imp.rows_succeeded} written)`
        : `while ${imp.status}; no row was written`;
    await db.query(sql.unsafe`
      UPDATE imports
      SET status = 'failed', failure_code = 'api_key_revoked',
          failure_message = ${`Stopped ${progress}: the API key that created this import (${imp.api_key_id}) was revoked.`},
          completed_at = now(), updated_at = now()
      WHERE institution_id = ${imp.institution_id} AND id = ${imp.id}
        AND NOT ${liveKey(imp.api_key_id)}`);
  });
}

type Chunk = z.infer<typeof chunkRow>;
type File = NonNullable<Awaited<ReturnType<typeof findFile>>>;

async function judge(
  db: DatabaseTransactionConnection,
  institution: Institution,
  imp: ImportRow,
  file: File,
  chunk: Chunk,
): Promise<RowOutcome[]> {
  const prepared = await prepareChunk(db, imp, file, chunk.rows as JsonValue[], chunk.first_row);
  const lookups = await readAhead(db, imp, prepared, true);
  const outcomes: RowOutcome[] = [];
  for (const row of prepared)
    outcomes.push(await runRow(db, institution, row, { dryRun: true, savepoint: false, lookups }));
  return outcomes;
}

/** Writes the chunk's rows that passed validation; their records' events go in one insert. */
async function write(
  db: DatabaseTransactionConnection,
  institution: Institution,
  imp: ImportRow,
  file: File,
  chunk: Chunk,
): Promise<RowOutcome[]> {
  const last = chunk.first_row + chunk.rows.length - 1;
  const refused = new Set(
    (
      await db.anyFirst(sql.unsafe`
        SELECT row_number FROM import_row_errors
        WHERE institution_id = ${imp.institution_id} AND import_id = ${imp.id}
          AND row_number BETWEEN ${chunk.first_row} AND ${last}`)
    ).map(Number),
  );
  const prepared = (
    await prepareChunk(db, imp, file, chunk.rows as JsonValue[], chunk.first_row)
  ).filter((row) => !refused.has(row.row));
  const lookups = await readAhead(db, imp, prepared, false);
  const runAll = async (on: DatabaseTransactionConnection, savepoint: boolean) => {
    const outcomes: RowOutcome[] = [];
    for (const row of prepared)
      outcomes.push(await runRow(on, institution, row, { dryRun: false, savepoint, lookups }));
    if (!savepoint && outcomes.some((outcome) => outcome.kind === 'failed')) throw new Redo();
    return outcomes;
  };
  // Every row in one savepoint, one statement each; if any row fails (a race since it was
  // judged), the chunk runs again with a savepoint per row, so the failure takes back only itself.
  let outcomes: RowOutcome[];
  try {
    outcomes = await db.transaction(async (batch) => {
      const written = await writeBatched(batch, institution, prepared, lookups);
      if (!written) throw new Redo();
      return written;
    });
  } catch {
    outcomes = await runAll(db, true);
  }
  const written = outcomes.filter((outcome) => outcome.kind === 'written');
  await insertRecordEvents(db, imp, written);
  await insertRowDuplicates(db, imp, written);
  return outcomes;
}

/** What the sweep finds of a running import: chunks not yet done in its current phase. */
export async function pendingChunks(
  pool: CommonQueryMethods,
  imp: ImportRow,
  limit: number,
): Promise<number[]> {
  const mark = sql.identifier([imp.status === 'importing' ? 'imported_at' : 'validated_at']);
  const chunks = await pool.anyFirst(sql.unsafe`
    SELECT chunk FROM import_chunks
    WHERE institution_id = ${imp.institution_id} AND file_id = ${imp.file_id} AND ${mark} IS NULL
    ORDER BY chunk LIMIT ${limit}`);
  return chunks.map(Number);
}

/** queued → validating: the sweep's first step for a new import. */
export async function startValidating(pool: DatabasePool, imp: ImportRow): Promise<void> {
  await pool.query(sql.unsafe`
    UPDATE imports SET status = 'validating', updated_at = now()
    WHERE institution_id = ${imp.institution_id} AND id = ${imp.id} AND status = 'queued'`);
}

/**
 * Donor rows that repeat an email or external id of an earlier row of the same file: reported
 * on the later row, never merged into one donor. Found over the whole file in one query.
 */
async function reportRepeats(db: DatabaseTransactionConnection, imp: ImportRow, file: File) {
  const keyOf = (column: string) => cellOfFile(file, column);
  const keys = [
    {
      param: 'email',
      value: keyOf('email'),
      normal: (value: ReturnType<typeof keyOf>) => sql.fragment`lower(trim(${value}))`,
    },
    {
      param: 'external_id',
      value: keyOf('external_id'),
      normal: (value: ReturnType<typeof keyOf>) => sql.fragment`trim(${value})`,
    },
  ].filter((key) => key.value !== null);
  if (!keys.length) return;
  await db.query(sql.unsafe`
    WITH rows AS (
      SELECT c.first_row + r.ordinality::int - 1 AS row_number, r.value
      FROM import_chunks c CROSS JOIN LATERAL json_array_elements(c.rows) WITH ORDINALITY AS r
      WHERE c.institution_id = ${imp.institution_id} AND c.file_id = ${imp.file_id}),
    keyed AS (
      ${sql.join(
        keys.map(
          (key) => sql.fragment`
            SELECT row_number, ${key.param}::text AS param, ${key.normal(key.value)} AS value
            FROM rows`,
        ),
        sql.fragment` UNION ALL `,
      )}),
    ranked AS (
      SELECT row_number, param, min(row_number) OVER (PARTITION BY param, value) AS first
      FROM keyed WHERE value IS NOT NULL AND value <> ''),
    repeats AS (
      SELECT row_number, jsonb_agg(jsonb_build_object(
               'param', param, 'code', 'already_in_use',
               'message', 'repeats the ' || param || ' of row ' || first || ' of this file')
             ORDER BY param) AS errors
      FROM ranked WHERE row_number > first GROUP BY row_number)
    INSERT INTO import_row_errors (institution_id, import_id, row_number, errors)
    SELECT ${imp.institution_id}, ${imp.id}, row_number, errors FROM repeats
    ON CONFLICT (institution_id, import_id, row_number) DO UPDATE
      SET errors = import_row_errors.errors || EXCLUDED.errors`);
}

/**
 * Rows that join a household an earlier row of the file creates (`household_external_id`, no
 * donor having that external id; the first row of any role with it, as rows.ts finds it) when
 * that row has errors: it will not be written, so neither will they. Reported here, once every
 * chunk is judged, so that the dry run says what the commit would do. Found over the whole file
 * in one query.
 */
async function reportUnwrittenHouseholds(
  db: DatabaseTransactionConnection,
  imp: ImportRow,
  file: File,
) {
  const member = cellOfFile(file, 'household_external_id');
  const role = cellOfFile(file, 'role');
  const externalId = cellOfFile(file, 'external_id');
  if (!member || !role || !externalId) return;
  const errorsOfRow = (row: FragmentSqlToken) => sql.fragment`
    SELECT e.errors FROM import_row_errors e
    WHERE e.institution_id = ${imp.institution_id} AND e.import_id = ${imp.id}
      AND e.row_number = ${row}`;
  await db.query(sql.unsafe`
    WITH rows AS (
      SELECT c.first_row + r.ordinality::int - 1 AS row_number, r.value
      FROM import_chunks c CROSS JOIN LATERAL json_array_elements(c.rows) WITH ORDINALITY AS r
      WHERE c.institution_id = ${imp.institution_id} AND c.file_id = ${imp.file_id}),
    households AS (
      SELECT trim(${externalId}) AS key, min(row_number) AS row_number
      FROM rows WHERE ${role} = ANY(${sql.array([...donorRoles], 'text')}) GROUP BY 1),
    unwritten AS (
      SELECT m.row_number, h.row_number AS household_row
      FROM rows m JOIN households h ON h.key = trim(${member}) AND h.row_number < m.row_number
      WHERE EXISTS (${errorsOfRow(sql.fragment`h.row_number`)})
        AND NOT EXISTS (SELECT 1 FROM donors d
                        WHERE d.institution_id = ${imp.institution_id} AND d.external_id = h.key)
        AND NOT EXISTS (SELECT 1 FROM (${errorsOfRow(sql.fragment`m.row_number`)}) AS own
                        CROSS JOIN LATERAL jsonb_array_elements(own.errors) AS x
                        WHERE x ->> 'param' = 'household_external_id'))
    INSERT INTO import_row_errors (institution_id, import_id, row_number, errors)
    SELECT ${imp.institution_id}, ${imp.id}, row_number,
           jsonb_build_array(jsonb_build_object(
             'param', 'household_external_id', 'code', 'reference_not_found',
             'message', 'names the household of row ' || household_row ||
                        ' of this file, which has errors: it is not imported'))
    FROM unwritten
    ON CONFLICT (institution_id, import_id, row_number) DO UPDATE
      SET errors = import_row_errors.errors || EXCLUDED.errors`);
}

/**
 * A donor file whose rows may join households that earlier rows create is written chunk after
 * chunk, in file order, so that each household is written before the rows that join it; any
 * other file's chunks are written side by side.
 */
export async function writesInOrder(db: CommonQueryMethods, imp: ImportRow): Promise<boolean> {
  if (imp.resource !== 'donors') return false;
  const file = await findFile(db, imp.institution_id, imp.file_id);
  return file?.columns.includes('household_external_id') ?? false;
}

/**
 * Every chunk judged: the file's repeats are reported, then the import is `validated` (a dry
 * run), `failed` (all_or_nothing with bad rows) or `importing`.
 */
export async function finishValidating(pool: DatabasePool, ref: ImportRow): Promise<void> {
  await pool.transaction(async (db) => {
    const imp = await findImport(db, ref.institution_id, ref.id, sql.fragment`FOR UPDATE`);
    if (imp?.status !== 'validating') return;
    if ((await pendingChunks(db, imp, 1)).length) return;
    const file = await findFile(db, imp.institution_id, imp.file_id);
    if (!file) throw new Error(`import ${imp.id} lost its file`);
    if (imp.resource === 'donors') {
      await reportRepeats(db, imp, file);
      await reportUnwrittenHouseholds(db, imp, file);
    }
    const failed = await db.oneFirst(sql.type(z.object({ count: z.number() }))`
      SELECT count(*)::int AS count FROM import_row_errors
      WHERE institution_id = ${imp.institution_id} AND import_id = ${imp.id}`);
    const counts = sql.fragment`rows_failed = ${failed},
      rows_succeeded = ${imp.rows_total - failed - imp.rows_skipped}`;
    const next =
      imp.mode === 'all_or_nothing' && failed > 0
        ? sql.fragment`status = 'failed', failure_code = 'invalid_rows',
            failure_message = ${`${failed} of ${imp.rows_total} rows have errors, so nothing was imported (mode all_or_nothing).`},
            completed_at = now(), ${counts}`
        : imp.dry_run
          ? sql.fragment`status = 'validated', completed_at = now(), ${counts}`
          : sql.fragment`status = 'importing', rows_processed = 0, rows_succeeded = 0,
              rows_skipped = 0, rows_failed = ${failed}`;
    await db.query(sql.unsafe`
      UPDATE imports SET ${next}, updated_at = now()
      WHERE institution_id = ${imp.institution_id} AND id = ${imp.id}`);
  });
}

/** Every chunk written: the import is `completed`, with its `import.completed` event. */
export async function finishImporting(pool: DatabasePool, ref: ImportRow): Promise<void> {
  await pool.transaction(async (db) => {
    const done = await db.maybeOne(sql.type(importRow)`
      UPDATE imports SET status = 'completed', completed_at = now(), updated_at = now()
      WHERE institution_id = ${ref.institution_id} AND id = ${ref.id} AND status = 'importing'
        AND NOT EXISTS (SELECT 1 FROM import_chunks
                        WHERE institution_id = ${ref.institution_id} AND file_id = ${ref.file_id}
                          AND imported_at IS NULL)
      RETURNING ${importColumns}`);
    if (!done) return;
    await insertEvents(db, [
      {
        institutionId: done.institution_id,
        type: 'import.completed',
        objectType: 'import',
        objectId: done.id,
        data: presentImport(done),
        previousAttributes: null,
        requestId: done.request_id,
        apiKeyId: done.api_key_id,
      },
    ]);
  });
}

/** Staged files no import claimed within the hour (an upload cut off, or a replayed create). */
export async function purgeUnclaimedFiles(pool: DatabasePool): Promise<number> {
  const result = await pool.query(sql.unsafe`
    DELETE FROM import_files f
    WHERE f.created_at < now() - interval '1 hour'
      AND NOT EXISTS (SELECT 1 FROM imports i
                      WHERE i.institution_id = f.institution_id AND i.file_id = f.id)`);
  return result.rowCount;
}
