import { hash } from 'node:crypto';
import {
  sql,
  type CommonQueryMethods,
  type DatabaseTransactionConnection,
  type FragmentSqlToken,
} from 'slonik';
import { z } from 'zod';
import { liveKey } from '../auth/liveKey.js';
import type {
  Consequence,
  JudgedCreate,
  SingleStatementCreate,
  StatementFollowUp,
} from '../commands/command.js';
import { consequenceTypeOf } from '../events/types.js';
import { insertEvent, type WriteEvent } from '../events/outbox.js';
import type { JsonObject } from '../json.js';
import { seal, unseal } from '../secrets.js';

type ReceiptSource = 'client' | 'job';

export interface ReceiptKey {
  institutionId: number;
  source: ReceiptSource;
  key: string;
}

export interface StoredResponse {
  fingerprint: string;
  status: number;
  body: JsonObject;
  location: string | null;
}

const receiptRow = z.object({
  fingerprint: z.string(),
  status_code: z.number(),
  response_body: z.record(z.string(), z.json()),
  location: z.string().nullable(),
  sealed_fields: z.string().nullable(),
});

/**
 * A body as its receipt keeps it: the fields that tell a secret set to null in place (so the
 * replay keeps the order of the first answer), and their values sealed together beside it.
 */
export function sealedBody(
  body: JsonObject,
  secretFields: readonly string[] | undefined,
): { body: JsonObject; sealedFields: string | null } {
  const held = (secretFields ?? []).filter((field) => body[field] !== undefined);
  if (!held.length) return { body, sealedFields: null };
  const secrets = Object.fromEntries(held.map((field) => [field, body[field]!]));
  return {
    body: { ...body, ...Object.fromEntries(held.map((field) => [field, null])) },
    sealedFields: seal(JSON.stringify(secrets)),
  };
}

/**
 * What `sealed_fields` holds for a receipt stored before sealing began, whose body still tells
 * its secrets in clear until a worker seals them (migration 1735080000000).
 */
export const CLEAR_FIELDS = 'clear';

/** The answer a receipt keeps, with its secrets opened again. */
function openedBody(body: JsonObject, sealedFields: string | null): JsonObject {
  if (sealedFields === null || sealedFields === CLEAR_FIELDS) return body;
  return { ...body, ...(JSON.parse(unseal(sealedFields)) as JsonObject) };
}

const toStored = (row: z.infer<typeof receiptRow>): StoredResponse => ({
  fingerprint: row.fingerprint,
  status: row.status_code,
  body: openedBody(row.response_body as JsonObject, row.sealed_fields),
  location: row.location,
});

/** What storing a write's receipt found (storeReceipt). */
export type ReceiptClaim =
  | { outcome: 'stored' }
  | { outcome: 'key_revoked' }
  | { outcome: 'earlier'; earlier: StoredResponse };

const claimRow = z.object({ stored: z.boolean(), key_live: z.boolean() });

/**
 * The events of a write's consequences (a pledge its payment fulfilled), as further steps of
 * storeReceipt's WITH: each inserted exactly when the receipt is, with the write's request and key.
 */
function consequenceSteps(
  consequences: readonly Consequence[],
  receipt: ReceiptKey,
  event: WriteEvent,
): FragmentSqlToken {
  if (!consequences.length) return sql.fragment``;
  return sql.fragment`${sql.join(
    consequences.map((consequence, index) => {
      const { type, objectType } = consequenceTypeOf(consequence.objectType, consequence.happened);
      return sql.fragment`, ${sql.identifier([`consequence_${index}`])} AS (${insertEvent(
        receipt.institutionId,
        { ...event, type, objectType },
        {
          objectId: sql.fragment`${consequence.object.id}`,
          data: sql.fragment`${sql.json(consequence.object)}`,
          previousAttributes: null,
          from: sql.fragment`FROM stored`,
        },
      )})`;
    }),
    sql.fragment``,
  )}`;
}

/**
 * Records a write's response under its key, inside the write's own transaction, as its last
 * statement, if the API key that sent it is still live (the API may have admitted the write on
 * a key confirmed seconds ago). `stored` when this transaction now holds the key (new, or the old
 * receipt had expired); else the key was revoked, or an earlier write committed a response under
 * it; the caller then rolls back. A concurrent write of the same key waits here until the other
 * transaction ends, so exactly one of them commits. The write's event goes into the outbox in the
 * same statement, exactly when the receipt is stored, and so do its consequences' events (a
 * pledge its payment fulfilled), with the same request and key.
 */
export async function storeReceipt(
  db: DatabaseTransactionConnection,
  receipt: ReceiptKey,
  apiKeyId: string,
  fingerprint: string,
  ttlSeconds: number,
  response: {
    status: number;
    body: JsonObject;
    location?: string | undefined;
    eventObject?: JsonObject | undefined;
    eventObjectId?: number | undefined;
    secretFields?: readonly string[] | undefined;
  },
  event: WriteEvent & { previousAttributes: JsonObject | null },
  consequences: readonly Consequence[] = [],
): Promise<ReceiptClaim> {
  const record = response.eventObject;
  const objectId = response.eventObjectId ?? (record ?? response.body).id;
  if (typeof objectId !== 'number') throw new Error('a committed write answered no record id');
  if (response.secretFields?.length && !record)
    throw new Error('an answer that tells a secret needs an event object without it');
  const kept = sealedBody(response.body, response.secretFields);
  const claim = await db.one(sql.type(claimRow)`
    WITH stored AS (
      INSERT INTO write_receipts (institution_id, source, key, fingerprint, status_code,
                                  response_body, location, expires_at, sealed_fields)
      SELECT ${receipt.institutionId}, ${receipt.source}, ${receipt.key}, ${fingerprint},
             ${response.status}, ${sql.json(kept.body)}, ${response.location ?? null},
             now() + make_interval(secs => ${ttlSeconds}), ${kept.sealedFields}
      WHERE ${liveKey(apiKeyId)}
      ON CONFLICT (institution_id, source, key) DO UPDATE
        SET fingerprint = EXCLUDED.fingerprint, status_code = EXCLUDED.status_code,
            response_body = EXCLUDED.response_body, location = EXCLUDED.location,
            sealed_fields = EXCLUDED.sealed_fields,
            created_at = now(), expires_at = EXCLUDED.expires_at
        WHERE write_receipts.expires_at <= now()
      RETURNING response_body),
    outbox AS (${insertEvent(receipt.institutionId, event, {
      objectId: sql.fragment`${objectId}`,
      data: record ? sql.fragment`${sql.json(record)}` : sql.fragment`stored.response_body`,
      previousAttributes: event.previousAttributes,
      from: sql.fragment`FROM stored`,
    })})
    ${consequenceSteps(consequences, receipt, event)}
    SELECT EXISTS (SELECT 1 FROM stored) AS stored, ${liveKey(apiKeyId)} AS key_live`);
  if (claim.stored) return { outcome: 'stored' };
  if (!claim.key_live) return { outcome: 'key_revoked' };
  const earlier = await findReceipt(db, receipt);
  if (!earlier) throw new Error('write receipt vanished while held');
  return { outcome: 'earlier', earlier };
}

/**
 * Stand-ins for the values an insert assigns, in a body presented before the insert: strings
 * holding U+0000, which no stored text can contain (Postgres refuses it, and so does validation),
 * so no client value can be taken for one. JSON writes U+0000 as the escape `\u0000`.
 */
const placeholders = {
  id: '\u0000id',
  created_at: '\u0000created_at',
  updated_at: '\u0000updated_at',
};

/** A timestamp of a created row as JSON, written as the API writes every timestamp. */
const jsonTimestamp = (created: string, column: 'created_at' | 'updated_at') =>
  sql.fragment`to_json(to_char(${sql.identifier([created, column])} AT TIME ZONE 'UTC',
                               'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::text`;

/** A create to commit together with its receipt (runWrite's single-statement path). */
export interface ReceiptedCreate {
  create: SingleStatementCreate;
  /** The API key that sent the write: nothing is written unless it is live (liveKey). */
  apiKeyId: string;
  receipt: ReceiptKey;
  fingerprint: string;
  ttlSeconds: number;
  event: WriteEvent;
}

export interface CreatedOutcome {
  status: 201;
  body: JsonObject;
  location: string;
}

const storedCreate = z.object({
  member: z.number(),
  response_body: z.record(z.string(), z.json()),
  location: z.string(),
});

/**
 * One create, its receipt and its event, as three data-modifying steps of a WITH, answering as
 * `member`.
 */
function createSteps(item: ReceiptedCreate, member: number) {
  const created = `created_${member}`;
  const stored = `receipt_${member}`;
  const event = `event_${member}`;
  const template = JSON.stringify(item.create.present({ ...item.create.fields, ...placeholders }));
  const { receipt } = item;
  return {
    steps: sql.fragment`
      ${sql.identifier([created])} AS (${item.create.insert(liveKey(item.apiKeyId))}),
      ${sql.identifier([stored])} AS (
        INSERT INTO write_receipts (institution_id, source, key, fingerprint, status_code,
                                    response_body, location, expires_at)
        SELECT ${receipt.institutionId}, ${receipt.source}, ${receipt.key}, ${item.fingerprint}, 201,
               replace(replace(replace(${template},
                 ${JSON.stringify(placeholders.id)}, ${sql.identifier([created, 'id'])}::text),
                 ${JSON.stringify(placeholders.created_at)}, ${jsonTimestamp(created, 'created_at')}),
                 ${JSON.stringify(placeholders.updated_at)}, ${jsonTimestamp(created, 'updated_at')})::json,
               ${`${item.create.path}/`} || ${sql.identifier([created, 'id'])},
               now() + make_interval(secs => ${item.ttlSeconds})
        FROM ${sql.identifier([created])}
        RETURNING response_body, location),
      ${sql.identifier([event])} AS (${insertEvent(receipt.institutionId, item.event, {
        objectId: sql.fragment`c.id`,
        data: sql.fragment`r.response_body`,
        previousAttributes: null,
        from: sql.fragment`FROM ${sql.identifier([stored])} r CROSS JOIN ${sql.identifier([created])} c`,
      })})`,
    answer: sql.fragment`
      SELECT ${member}::int AS member, response_body, location FROM ${sql.identifier([stored])}`,
  };
}

/**
 * Commits creates, their receipts and their events as one statement: one round trip, atomic on
 * its own. Each receipt's body is the record presented from its fields with the id and timestamps its insert
 * assigned filled in, and the stored body is the answer, so the first response and every replay
 * are the same text. An outcome per create, in order; null, writing nothing, where its guard did
 * not hold. Anything refused throws (Slonik's IntegrityConstraintViolationError for a reference
 * that is gone, or a key that already holds a receipt, even an expired one: storeReceipt's path
 * takes those over) and writes nothing at all.
 *
 * Creates of one shape (one institution, one table, the same fields and references: every
 * `POST /gifts` of the common kind) go as rows of one JSON parameter in a statement whose text
 * does not depend on how many there are (createsAsRows); others as steps of a WITH per create.
 */
export async function insertWithReceipts(
  db: CommonQueryMethods,
  items: readonly ReceiptedCreate[],
  options: { prepared?: boolean } = {},
): Promise<(CreatedOutcome | null)[]> {
  const rows = await db.any(
    sameShape(items)
      ? createsAsRowsStatement(createsAsRows(items), options.prepared ?? false)
      : sql.type(storedCreate)`${createsAsSteps(items)}`,
  );
  const outcomes: (CreatedOutcome | null)[] = items.map(() => null);
  for (const row of rows) {
    outcomes[row.member] = {
      status: 201,
      body: row.response_body as JsonObject,
      location: row.location,
    };
  }
  return outcomes;
}

/**
 * The statement of createsAsRows, named after its text when `prepared`: a named statement is
 * parsed and planned once per connection (node-postgres prepares it on first use), where an
 * unnamed one is planned on every execution, which cost about as much as running it for a batch
 * of one or two creates. A shape has one text for any number of creates, so a connection holds a
 * handful of them.
 */
function createsAsRowsStatement(statement: FragmentSqlToken, prepared: boolean) {
  if (!prepared) return sql.type(storedCreate)`${statement}`;
  const name = `dgs_creates_${hash('sha256', statement.sql, 'hex').slice(0, 24)}`;
  return sql.prepared(name, storedCreate)`${statement}`;
}

/**
 * Each create as three steps of one WITH: a statement text of its own for every batch size. The
 * follow-up steps of the creates that have them run once, over all of those creates (their
 * guards are in their inserts).
 */
function createsAsSteps(items: readonly ReceiptedCreate[]): FragmentSqlToken {
  const parts = items.map(createSteps);
  const followed = items.flatMap((item, member) =>
    item.create.followed
      ? [
          sql.fragment`SELECT c.id, ${sql.jsonb(item.create.followed.judged.fields as JsonObject)} AS fields
            FROM ${sql.identifier([`created_${member}`])} c`,
        ]
      : [],
  );
  const followUp = followUpOf(items);
  return sql.fragment`
    WITH ${sql.join(
      parts.map((part) => part.steps),
      sql.fragment`,`,
    )}
    ${followUp && followed.length ? sql.fragment`, ${followUp.steps(sql.fragment`${sql.join(followed, sql.fragment` UNION ALL `)}`)}` : sql.fragment``}
    ${sql.join(
      parts.map((part) => part.answer),
      sql.fragment` UNION ALL `,
    )}`;
}

/** The row of a create as judged, with or without a follow-up. */
const judgedOf = (create: SingleStatementCreate): JudgedCreate | undefined =>
  create.judged ?? create.followed?.judged;

/**
 * The follow-up of the creates that have one; they must share it (only gifts have one), or the
 * statement cannot be built: a batch then tries each create alone.
 */
function followUpOf(items: readonly ReceiptedCreate[]): StatementFollowUp | null {
  const followUps = items.flatMap((item) => item.create.followed?.followUp ?? []);
  if (followUps.some((followUp) => followUp.kind !== followUps[0]!.kind))
    throw new Error('creates of different follow-ups in one statement');
  return followUps[0] ?? null;
}

/** What creates must share to be rows of one statement; null for a create that cannot be. */
function shapeOf(item: ReceiptedCreate): string | null {
  const judged = judgedOf(item.create);
  if (!judged) return null;
  const references = judged.references.map(
    ({ reference }) => `${reference.table}:${reference.unusable?.statuses.join('|') ?? ''}`,
  );
  return [
    item.receipt.institutionId,
    judged.table.name,
    item.create.followed?.followUp.kind ?? '',
    Object.keys(judged.fields).join(','),
    ...references,
  ].join(';');
}

function sameShape(items: readonly ReceiptedCreate[]): boolean {
  const shape = shapeOf(items[0]!);
  return shape !== null && items.every((item) => shapeOf(item) === shape);
}

/**
 * Creates of one shape as one statement whose text is the same for any number of them, so that
 * Postgres parses and plans a few steps per batch rather than three per create (planning the
 * steps of a batch of 32 cost more than running them). Each create is a row of one JSON
 * parameter. A row is written only if its API key is live and every record it references is
 * the institution's (and usable), held FOR KEY SHARE until the commit: what the guard of its
 * single insert holds (the donor's foreign key included, which takes the same lock). The rows
 * admitted are inserted in order, and the ids an insert draws follow that order, which is how
 * each inserted row is matched to its create (as insertRowsFragment does).
 */
function createsAsRows(items: readonly ReceiptedCreate[]): FragmentSqlToken {
  const { table, fields, references } = judgedOf(items[0]!.create)!;
  const followUp = items[0]!.create.followed?.followUp ?? null;
  const institutionId = items[0]!.receipt.institutionId;
  const names = Object.keys(fields);
  const rows = items.map((item, member) => {
    const { create, receipt, event } = item;
    const judged = judgedOf(create)!;
    const template = create.present({ ...create.fields, ...placeholders });
    return {
      member,
      api_key_id: item.apiKeyId,
      source: receipt.source,
      key: receipt.key,
      fingerprint: item.fingerprint,
      ttl_seconds: item.ttlSeconds,
      template: JSON.stringify(template),
      location: `${create.path}/`,
      type: event.type,
      object_type: event.objectType,
      request_id: event.requestId,
      event_api_key_id: event.apiKeyId,
      fields: judged.fields,
      base_currency: judged.baseCurrency ?? null,
      rate_currency: judged.rate?.currency ?? null,
      rate_on: judged.rate?.on ?? null,
      rate: judged.rate?.rate ?? null,
      hints: create.followed?.followUp.hints ?? null,
      ...Object.fromEntries(judged.references.map(({ ids }, index) => [`ref_${index}`, ids])),
    };
  });
  // Each reference's ids as a bigint[] column of its own: `ref_0`, `ref_1`, …
  const referenceColumns = references.map((_, index) => sql.identifier([`ref_${index}`]));
  const held = references.map(({ reference }, index) => {
    const ids = sql.fragment`m.${referenceColumns[index]!}`;
    const usable = reference.unusable
      ? sql.fragment`AND status <> ALL(${sql.array([...reference.unusable.statuses], 'text')})`
      : sql.fragment``;
    return sql.fragment`(SELECT count(*) FROM (
        SELECT id FROM ${sql.identifier([reference.table])}
        WHERE institution_id = ${institutionId} AND id = ANY(${ids}) ${usable}
        ORDER BY id FOR KEY SHARE) AS held) = cardinality(${ids})`;
  });
  // Held as baseCurrency holds it: after waiting for a change of currency, the lock reads the
  // row as the change left it.
  const sameBase = sql.fragment`AND (m.base_currency IS NULL OR EXISTS (SELECT 1 FROM institutions
    WHERE id = ${institutionId} AND currency = m.base_currency FOR KEY SHARE))`;
  // A hinted rate is still the one in effect (as findExchangeRate finds it).
  const sameRate = sql.fragment`AND (m.rate_currency IS NULL OR (SELECT rate FROM exchange_rates
      WHERE institution_id = ${institutionId} AND currency = m.rate_currency
        AND effective_on <= m.rate_on
      ORDER BY effective_on DESC LIMIT 1) = m.rate)`;
  const columns = sql.join(
    names.map((name) => sql.identifier([name])),
    sql.fragment`, `,
  );
  const values = sql.join(
    names.map((name) => sql.identifier(['f', name])),
    sql.fragment`, `,
  );
  const requested = sql.fragment`json_to_recordset(${sql.json(rows)}) AS m(
        member int, api_key_id text, source text, key text, fingerprint text, ttl_seconds int,
        template text, location text, type text, object_type text, request_id text,
        event_api_key_id text, fields json, base_currency text, rate_currency text, rate_on date,
        rate numeric, hints jsonb${sql.join(
          referenceColumns.map((column) => sql.fragment`, ${column} int8[]`),
          sql.fragment``,
        )})`;
  // The one lock order (holdDonors): every donor any create names, lower id first, before any
  // other row. Held create by create instead, two creates naming a merge's two donors in
  // opposite orders would each hold one while the merge holds the other.
  const namesDonors = references.some(({ reference }) => reference.table === 'donors');
  const donorIds = [
    ...new Set(
      items.flatMap((item) =>
        judgedOf(item.create)!.references.flatMap(({ reference, ids }) =>
          reference.table === 'donors' ? ids : [],
        ),
      ),
    ),
  ];
  const first = namesDonors
    ? sql.fragment`
    WITH donors_held AS MATERIALIZED (
      SELECT id FROM donors
      WHERE institution_id = ${institutionId} AND id = ANY(${sql.array(donorIds, 'int8')})
      ORDER BY id FOR KEY SHARE),
    requested AS MATERIALIZED (
      SELECT * FROM ${requested} WHERE (SELECT count(*) FROM donors_held) >= 0),`
    : sql.fragment`
    WITH requested AS MATERIALIZED (SELECT * FROM ${requested}),`;
  // A follow-up's guard is judged once per distinct hints: the creates of a batch mostly share
  // theirs (gifts coded alike).
  const guarded = followUp
    ? sql.fragment`${first}
    hinted AS MATERIALIZED (
      SELECT h.hints, ${followUp.guard(sql.fragment`h.hints`)} AS holds
      FROM (SELECT DISTINCT hints FROM requested) AS h
      WHERE ${followUp.first(sql.fragment`SELECT fields::jsonb AS fields FROM requested`)}),
    admitted AS MATERIALIZED (
      SELECT m.*, row_number() OVER (ORDER BY m.member) AS n
      FROM requested AS m
      WHERE (SELECT holds FROM hinted WHERE hinted.hints = m.hints) AND`
    : sql.fragment`${first}
    admitted AS MATERIALIZED (
      SELECT m.*, row_number() OVER (ORDER BY m.member) AS n
      FROM requested AS m
      WHERE`;
  return sql.fragment`${guarded}
        ${liveKey(sql.fragment`m.api_key_id`)}
        ${held.length ? sql.fragment`AND ${sql.join(held, sql.fragment` AND `)}` : sql.fragment``}
        ${sameBase} ${sameRate}),
    inserted AS (
      INSERT INTO ${sql.identifier([table.name])} (institution_id, ${columns})
      SELECT ${institutionId}, ${values}
      FROM admitted a
        CROSS JOIN LATERAL json_populate_record(NULL::${sql.identifier([table.name])}, a.fields) AS f
      ORDER BY a.n
      RETURNING id, created_at, updated_at),
    created AS (SELECT c.*, row_number() OVER (ORDER BY c.id) AS n FROM inserted c),
    stored AS (
      INSERT INTO write_receipts (institution_id, source, key, fingerprint, status_code,
                                  response_body, location, expires_at)
      SELECT ${institutionId}, a.source, a.key, a.fingerprint, 201,
             replace(replace(replace(a.template,
               ${JSON.stringify(placeholders.id)}, c.id::text),
               ${JSON.stringify(placeholders.created_at)}, ${jsonTimestamp('c', 'created_at')}),
               ${JSON.stringify(placeholders.updated_at)}, ${jsonTimestamp('c', 'updated_at')})::json,
             a.location || c.id, now() + make_interval(secs => a.ttl_seconds)
      FROM admitted a JOIN created c ON c.n = a.n
      ORDER BY a.n
      RETURNING source, key, response_body, location),
    outbox AS (
      INSERT INTO events (institution_id, type, object_type, object_id, data, previous_attributes,
                          request_id, api_key_id)
      SELECT ${institutionId}, a.type, a.object_type, c.id, s.response_body, NULL::json,
             a.request_id, a.event_api_key_id
      FROM admitted a JOIN created c ON c.n = a.n
        JOIN stored s ON s.source = a.source AND s.key = a.key
      ORDER BY a.n)
    ${
      followUp
        ? sql.fragment`, ${followUp.steps(
            sql.fragment`SELECT c.id, a.fields::jsonb AS fields FROM admitted a JOIN created c ON c.n = a.n`,
          )}`
        : sql.fragment``
    }
    SELECT a.member, s.response_body, s.location
    FROM admitted a JOIN stored s ON s.source = a.source AND s.key = a.key`;
}

/** insertWithReceipts for one create. */
export async function insertWithReceipt(
  db: CommonQueryMethods,
  item: ReceiptedCreate,
): Promise<CreatedOutcome | null> {
  const [outcome] = await insertWithReceipts(db, [item]);
  return outcome ?? null;
}

/** The key's unexpired receipt, as a condition on `write_receipts r`. */
const unexpiredUnder = (receipt: ReceiptKey) => sql.fragment`
  r.institution_id = ${receipt.institutionId} AND r.source = ${receipt.source}
  AND r.key = ${receipt.key} AND r.expires_at > now()`;

/** The unexpired response stored under a key, if any. */
async function findReceipt(
  db: CommonQueryMethods,
  receipt: ReceiptKey,
): Promise<StoredResponse | null> {
  const row = await db.maybeOne(sql.type(receiptRow)`
    SELECT fingerprint, status_code, response_body, location, sealed_fields
    FROM write_receipts r WHERE ${unexpiredUnder(receipt)}`);
  return row ? toStored(row) : null;
}

const receiptWithKey = receiptRow
  .partial()
  .extend({ member: z.number(), key_live: z.boolean(), found: z.boolean() });

export interface ReceiptLookup {
  /** Whether the API key that asks may still act. */
  keyLive: boolean;
  completed: StoredResponse | null;
}

/**
 * findReceipt together with whether the API key that asks may still act (one round trip): for a
 * retry answered without a worker, and for a refused write.
 */
export async function findReceiptFor(
  db: CommonQueryMethods,
  receipt: ReceiptKey,
  apiKeyId: string,
): Promise<ReceiptLookup> {
  const [found] = await findReceiptsFor(db, receipt.institutionId, receipt.source, [
    { key: receipt.key, apiKeyId },
  ]);
  return found!;
}

/**
 * findReceiptFor for many keys of one institution in one statement, whose text is the same for
 * any number of them (the API answers the retries it receives together this way): a lookup per
 * key, in order. Each key is looked up on its own, by the whole primary key (the LIMIT keeps the
 * subquery from being merged into a join): as a join, the planner trusted statistics that said
 * an institution had two receipts when it had thousands, and scanned them all for every retry.
 */
export async function findReceiptsFor(
  db: CommonQueryMethods,
  institutionId: number,
  source: ReceiptSource,
  asks: readonly { key: string; apiKeyId: string }[],
): Promise<ReceiptLookup[]> {
  const rows = await db.any(sql.type(receiptWithKey)`
    SELECT a.member::int AS member, ${liveKey(sql.fragment`a.api_key_id`)} AS key_live,
           r.fingerprint IS NOT NULL AS found,
           r.fingerprint, r.status_code, r.response_body, r.location, r.sealed_fields
    FROM unnest(${sql.array(
      asks.map(({ key }) => key),
      'text',
    )}, ${sql.array(
      asks.map(({ apiKeyId }) => apiKeyId),
      'text',
    )}) WITH ORDINALITY AS a(key, api_key_id, member)
    LEFT JOIN LATERAL (
      SELECT fingerprint, status_code, response_body, location, sealed_fields
      FROM write_receipts
      WHERE institution_id = ${institutionId} AND source = ${source} AND key = a.key
        AND expires_at > now()
      LIMIT 1) r ON true`);
  const lookups: ReceiptLookup[] = asks.map(() => ({ keyLive: false, completed: null }));
  for (const row of rows)
    lookups[row.member - 1] = {
      keyLive: row.key_live,
      completed: row.found ? toStored(receiptRow.parse(row)) : null,
    };
  return lookups;
}

/** Deletes expired receipts in batches; returns how many went. */
export async function purgeExpiredReceipts(
  db: CommonQueryMethods,
  batchSize = 5_000,
): Promise<number> {
  let total = 0;
  for (;;) {
    const result = await db.query(sql.unsafe`
      DELETE FROM write_receipts
      WHERE ctid IN (SELECT ctid FROM write_receipts WHERE expires_at <= now() LIMIT ${batchSize})`);
    total += result.rowCount;
    if (result.rowCount < batchSize) return total;
  }
}
