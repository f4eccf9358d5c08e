import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { JsonObject, JsonValue } from '../../json.js';
import { columnsOf } from '../table.js';
import { donorTable, type DonorRow } from './schema.js';

/** What an erased donor's names become (constituents.md §6). */
export const ERASED_NAME = 'Erased';

/**
 * Everything by which stored text can name the person: the donor and the tombstones merged
 * into it (the same person under other records), their email addresses (compared
 * case-insensitively), phone numbers and external ids (exactly), and first and last names.
 */
export interface Person {
  ids: ReadonlySet<number>;
  emails: ReadonlySet<string>;
  phones: ReadonlySet<string>;
  externalIds: ReadonlySet<string>;
  names: ReadonlySet<string>;
}

const tombstoneRow = z.object({
  merged_email: z.string().nullable(),
  merged_external_id: z.string().nullable(),
});

const nameKey = (first: string | null, last: string | null) =>
  first && last ? `${first.trim().toLowerCase()}\u0000${last.trim().toLowerCase()}` : null;

/** The donor and its tombstones, as erasure reaches them. */
export async function findPerson(
  db: CommonQueryMethods,
  institutionId: number,
  donor: DonorRow,
): Promise<{ person: Person; tombstones: DonorRow[] }> {
  const rows = await db.any(sql.type(donorTable.row.merge(tombstoneRow))`
    SELECT ${columnsOf(donorTable)}, merged_email, merged_external_id FROM donors
    WHERE institution_id = ${institutionId} AND merged_into_id = ${donor.id}
    ORDER BY id`);
  const tombstones = rows as readonly (DonorRow & z.infer<typeof tombstoneRow>)[];
  const all = [donor, ...tombstones];
  const emails = new Set<string>();
  const phones = new Set<string>();
  const externalIds = new Set<string>();
  const names = new Set<string>();
  const addEmail = (value: string | null | undefined) => {
    if (value?.trim()) emails.add(value.trim().toLowerCase());
  };
  const add = (set: Set<string>, value: string | null | undefined) => {
    if (value?.trim()) set.add(value.trim());
  };
  for (const row of all) {
    addEmail(row.email);
    row.emails.forEach((entry) => addEmail(entry.address));
    add(phones, row.phone);
    row.phones.forEach((entry) => add(phones, entry.number));
    add(externalIds, row.external_id);
    const name = nameKey(row.first_name, row.last_name);
    if (name) names.add(name);
  }
  for (const row of tombstones) {
    addEmail(row.merged_email);
    add(externalIds, row.merged_external_id);
  }
  return {
    person: { ids: new Set(all.map((row) => row.id)), emails, phones, externalIds, names },
    tombstones: [...tombstones],
  };
}

const isObject = (value: JsonValue | undefined): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const names = new Set(['first_name', 'last_name', 'organization_name', 'display_name']);
const cleared = new Set(['email', 'phone', 'address', 'external_id', 'mailing_address']);
const emptied = new Set(['emails', 'phones', 'addresses']);

/**
 * A donor object (as an answer or an event presents it) or a donor's `previous_attributes`,
 * with the person's data as erasure leaves it: names "Erased", contact points and the date of
 * death gone, a merge's `dropped` contact points gone. Keys are kept, so the shape holds.
 */
export function eraseDonorFields(object: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(object)) {
    if (names.has(key)) out[key] = value === null ? null : ERASED_NAME;
    else if (cleared.has(key) || key === 'deceased_on') out[key] = null;
    else if (emptied.has(key)) out[key] = [];
    else if (key === 'dropped' && isObject(value))
      out[key] = Object.fromEntries(Object.keys(value).map((list) => [list, []]));
    else out[key] = value;
  }
  return out;
}

/** The free text of records naming the person that erasure clears (eraseRecords). */
const freeText: Record<string, { sides: string[]; fields: string[]; as: string | null }> = {
  relationship: { sides: ['donor_id', 'related_donor_id'], fields: ['note'], as: null },
  pledge: { sides: ['donor_id'], fields: ['note'], as: null },
  consent: { sides: ['donor_id'], fields: ['statement'], as: ERASED_NAME },
};

// A phone number or an external id may be short digits ("1001") that any amount or check
// number could be: they count only under a key that holds one (`phone`, `phones.0.number`,
// `donor_external_id`). An email address is one anywhere.
const phoneKey = /(^|\.)(phone|number)$/;
const externalIdKey = /(^|[._])external_id$/;

const matches = (person: Person, key: string, value: string) =>
  person.emails.has(value.trim().toLowerCase()) ||
  (phoneKey.test(key) && person.phones.has(value.trim())) ||
  (externalIdKey.test(key) && person.externalIds.has(value.trim()));

/**
 * Any stored JSON (an event's object, a stored answer) as erasure leaves it: a donor object of
 * the person erased (eraseDonorFields), a tribute naming the person as honoree without the
 * honoree's name, any string that is one of the person's email addresses (or, under a key that
 * holds one, phone numbers or external ids) nulled, a copy of a receipt to the person without its frozen name and
 * address (the receipt itself, the tax record the law obliges the institution to keep, stays
 * as issued).
 */
export function scrubJson(value: JsonValue, person: Person, key = ''): JsonValue {
  if (typeof value === 'string') return matches(person, key, value) ? null : value;
  if (Array.isArray(value)) return value.map((item) => scrubJson(item, person, key));
  if (!isObject(value)) return value;
  const own =
    value.object === 'donor' && typeof value.id === 'number' && person.ids.has(value.id)
      ? eraseDonorFields(value)
      : value;
  const out: JsonObject = {};
  for (const [name, item] of Object.entries(own)) out[name] = scrubJson(item, person, name);
  const names = (field: string) =>
    typeof out[field] === 'number' && person.ids.has(out[field] as number);
  // The free text about the person on its records, as eraseRecords clears it in the tables.
  const clear = freeText[String(out.object)];
  if (clear && clear.sides.some(names))
    for (const field of clear.fields) if (out[field] != null) out[field] = clear.as;
  // A receipt keeps its frozen name and address in the receipts table, the tax record; its
  // copies in events and stored answers are not that record.
  if (
    out.object === 'receipt' &&
    typeof out.donor_id === 'number' &&
    person.ids.has(out.donor_id)
  ) {
    if (typeof out.donor_name === 'string') out.donor_name = ERASED_NAME;
    if ('donor_address' in out) out.donor_address = null;
  }
  if (
    typeof out.honoree_donor_id === 'number' &&
    person.ids.has(out.honoree_donor_id) &&
    typeof out.honoree_name === 'string'
  )
    out.honoree_name = ERASED_NAME;
  return out;
}

/**
 * Whether an import row (by column: CSV cells are strings, JSON rows any value) is
 * about the person: it names one of its ids as `donor_id`, holds one of its email addresses in
 * any cell (or a phone number or external id in a cell of one), or is a donor row with its
 * first and last name.
 * Names alone may catch a namesake's row too: erasure errs on the side of the person.
 */
export function rowNamesPerson(row: JsonValue, person: Person): boolean {
  if (!isObject(row)) return false;
  const id = row.donor_id;
  if ((typeof id === 'number' || typeof id === 'string') && person.ids.has(Number(id))) return true;
  const name = nameKey(
    typeof row.first_name === 'string' ? row.first_name : null,
    typeof row.last_name === 'string' ? row.last_name : null,
  );
  if (name && person.names.has(name)) return true;
  const holds = (value: JsonValue, key: string): boolean =>
    typeof value === 'string'
      ? matches(person, key, value)
      : Array.isArray(value)
        ? value.some((item) => holds(item, key))
        : isObject(value) && Object.entries(value).some(([name, item]) => holds(item, name));
  return holds(row, '');
}

/** LIKE patterns that every stored text naming the person holds one of (a cheap first sieve). */
function sieve(person: Person): string[] {
  const escape = (value: string) => value.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`);
  const words = [
    ...person.emails,
    ...person.phones,
    ...person.externalIds,
    ...[...person.names].map((name) => name.split('\u0000')[1]!),
    ...[...person.ids].flatMap((id) => [`"id":${id},"object":"donor"`, `_donor_id":${id}`]),
    ...[...person.ids].flatMap((id) => [`"donor_id":${id}`, `"donor_id":"${id}"`]),
  ];
  return [...new Set(words)].map((word) => `%${escape(word)}%`);
}

const eventRow = z.object({
  seq: z.number(),
  object_type: z.string(),
  object_id: z.number(),
  data: z.json(),
  previous_attributes: z.json().nullable(),
});
const receiptRow = z.object({ source: z.string(), key: z.string(), response_body: z.json() });
const chunkRow = z.object({
  file_id: z.number(),
  chunk: z.number(),
  rows: z.array(z.json()),
  // A CSV file's header: its rows are arrays of cells in this order (a JSON file's, objects).
  columns: z.array(z.string()),
});

const same = (a: JsonValue, b: JsonValue) => JSON.stringify(a) === JSON.stringify(b);

/**
 * What erasure reaches besides the donor's own records (constituents.md §6): stored events
 * (and so the payloads of webhook deliveries not yet made, which are built from them), stored
 * idempotency answers, and import rows (and so the error files built from them). Each is bounded
 * by its retention: EVENT_RETENTION_DAYS, 24 hours, IMPORT_FILE_RETENTION_DAYS. Returns how many
 * records of each kind changed.
 */
export async function eraseStoredCopies(
  db: CommonQueryMethods,
  institutionId: number,
  person: Person,
): Promise<{ events: number; idempotency_answers: number; import_rows: number }> {
  const patterns = sql.array(sieve(person), 'text');
  const ids = sql.array([...person.ids], 'int8');
  let events = 0;
  const storedEvents = await db.any(sql.type(eventRow)`
    SELECT seq, object_type, object_id, data, previous_attributes FROM events
    WHERE institution_id = ${institutionId}
      AND ((object_type = 'donor' AND object_id = ANY(${ids}))
        OR lower(data::text) LIKE ANY(${patterns})
        OR lower(coalesce(previous_attributes::text, '')) LIKE ANY(${patterns}))`);
  for (const event of storedEvents) {
    const own = event.object_type === 'donor' && person.ids.has(event.object_id);
    const data = scrubJson(event.data as JsonValue, person);
    const before = event.previous_attributes as JsonValue;
    const previous = isObject(before)
      ? scrubJson(own ? eraseDonorFields(before) : before, person)
      : before;
    if (same(data, event.data as JsonValue) && same(previous, before)) continue;
    events += 1;
    await db.query(sql.unsafe`
      UPDATE events SET data = ${sql.json(data)}::json,
             previous_attributes = ${previous === null ? null : sql.json(previous)}::json
      WHERE institution_id = ${institutionId} AND seq = ${event.seq}`);
  }
  let answers = 0;
  const stored = await db.any(sql.type(receiptRow)`
    SELECT source, key, response_body FROM write_receipts
    WHERE institution_id = ${institutionId} AND response_body IS NOT NULL
      AND lower(response_body::text) LIKE ANY(${patterns})`);
  for (const receipt of stored) {
    const body = scrubJson(receipt.response_body as JsonValue, person);
    if (same(body, receipt.response_body as JsonValue)) continue;
    answers += 1;
    await db.query(sql.unsafe`
      UPDATE write_receipts SET response_body = ${sql.json(body)}::json
      WHERE institution_id = ${institutionId} AND source = ${receipt.source}
        AND key = ${receipt.key}`);
  }
  let importRows = 0;
  const chunks = await db.any(sql.type(chunkRow)`
    SELECT c.file_id, c.chunk, c.rows, f.columns FROM import_chunks c
    JOIN import_files f ON f.institution_id = c.institution_id AND f.id = c.file_id
    WHERE c.institution_id = ${institutionId}
      AND (lower(c.rows::text) LIKE ANY(${patterns})
        -- A CSV cell is no "donor_id":N the sieve could find.
        OR (f.format = 'csv' AND f.columns ? 'donor_id'))`);
  for (const chunk of chunks) {
    let changed = 0;
    // A row about the person becomes an empty one (no cell, or every CSV cell empty): the file
    // keeps its row numbers.
    const rows = chunk.rows.map((row) => {
      const cells = row as JsonValue;
      const named = Array.isArray(cells)
        ? Object.fromEntries(chunk.columns.map((column, index) => [column, cells[index] ?? null]))
        : cells;
      if (!rowNamesPerson(named, person)) return cells;
      changed += 1;
      return Array.isArray(cells) ? cells.map(() => '') : {};
    });
    if (!changed) continue;
    importRows += changed;
    await db.query(sql.unsafe`
      UPDATE import_chunks SET rows = ${sql.json(rows)}::json
      WHERE institution_id = ${institutionId} AND file_id = ${chunk.file_id}
        AND chunk = ${chunk.chunk}`);
  }
  return { events, idempotency_answers: answers, import_rows: importRows };
}

/**
 * The person's own records as erasure leaves them: the donor and its tombstones with names
 * "Erased" and no contact point, external id or date of death; the free text about it
 * (relationship and pledge notes, dismissed duplicate pairs' reasons) gone, consent statements
 * "Erased" (an opt-in keeps one); a tribute to it without its name. Gifts, pledges, recurring gifts and receipts keep
 * their amounts and donor, so its money stays in every total; receipts keep their frozen name
 * and address.
 */
export async function eraseRecords(
  db: CommonQueryMethods,
  institutionId: number,
  person: Person,
): Promise<void> {
  const ids = sql.array([...person.ids], 'int8');
  const scope = sql.fragment`institution_id = ${institutionId}`;
  const erasedName = (column: string) =>
    sql.fragment`${sql.identifier([column])} = CASE WHEN ${sql.identifier([column])} IS NULL
                   THEN NULL ELSE ${ERASED_NAME} END`;
  await db.query(sql.unsafe`
    UPDATE donors
    SET ${erasedName('first_name')}, ${erasedName('last_name')},
        ${erasedName('organization_name')}, email = NULL, phone = NULL, address = NULL,
        external_id = NULL, emails = '[]', phones = '[]', addresses = '[]', deceased_on = NULL,
        merged_email = NULL, merged_external_id = NULL,
        status = CASE WHEN status = 'merged' THEN 'merged' ELSE 'erased' END, updated_at = now()
    WHERE ${scope} AND id = ANY(${ids})`);
  await db.query(sql.unsafe`
    UPDATE relationships SET note = NULL, updated_at = now()
    WHERE ${scope} AND note IS NOT NULL
      AND (donor_id = ANY(${ids}) OR related_donor_id = ANY(${ids}))`);
  await db.query(sql.unsafe`
    UPDATE pledges SET note = NULL, updated_at = now()
    WHERE ${scope} AND note IS NOT NULL AND donor_id = ANY(${ids})`);
  // An opt-in must keep a statement (the evidence that it was given): it becomes "Erased".
  await db.query(sql.unsafe`
    UPDATE consents SET statement = ${ERASED_NAME}
    WHERE ${scope} AND statement IS NOT NULL AND donor_id = ANY(${ids})`);
  await db.query(sql.unsafe`
    UPDATE gifts SET tribute = jsonb_set(tribute, '{honoree_name}', to_jsonb(${ERASED_NAME}::text)),
           updated_at = now()
    WHERE ${scope} AND tribute_honoree_donor_id = ANY(${ids}) AND tribute ? 'honoree_name'`);
  // The matching triggers drop the pairs still open; a dismissed one would keep its reason. An
  // import's candidates (GET /imports/{id}/duplicates) would still list the person.
  await db.query(sql.unsafe`
    DELETE FROM duplicate_pairs
    WHERE ${scope} AND (donor_id = ANY(${ids}) OR other_donor_id = ANY(${ids}))`);
  await db.query(sql.unsafe`
    DELETE FROM import_row_duplicates WHERE ${scope} AND donor_id = ANY(${ids})`);
}
