import type { DatabaseTransactionConnection, FragmentSqlToken } from 'slonik';
import { sql } from 'slonik';
import type { ApiError, FieldError } from '../errors.js';
import type { Stored, Table } from '../resources/table.js';
import type { JsonObject } from '../json.js';
import type { Reference } from '../resources/reference.js';

export interface Institution {
  id: number;
  name: string;
  currency: string;
}

/** What a write carries from the HTTP request to the command: path parameters and JSON body. */
export interface WriteRequest {
  params: Record<string, string>;
  body: JsonObject;
}

export interface CommandContext {
  db: DatabaseTransactionConnection;
  institution: Institution;
  /** A dry run runs every check in a read-only transaction and writes nothing. */
  dryRun: boolean;
  /** The time a dry run reports for server-assigned timestamps. */
  now: string;
  /**
   * The key making the request, for the writes whose rules depend on it (a key grants no more
   * than it has, and cannot revoke itself). Absent where no request is (an import's chunk).
   */
  apiKeyId?: string;
  /**
   * Where a real write records the other records it changed in a way the spec names (a pledge
   * fulfilled by a payment): each becomes an event committed with the write's own.
   */
  consequences?: Consequence[];
  /**
   * Records read ahead for many writes at once (an import's chunk): the reference and uniqueness
   * checks (common/resources/checks.ts) answer from it what it holds, and ask the database what it
   * does not. The rules stay the checks'; only the reading is batched.
   */
  lookups?: LookupCache;
}

/** Another record's event that a write makes beside its own (`pledge.fulfilled`). */
export interface Consequence {
  objectType: string;
  /** `<objectType>.<happened>`, a type the object's resource declares in `consequences`. */
  happened: string;
  /** The record as GET returns it after the write. */
  object: JsonObject & { id: number };
}

/** What an import's chunk read ahead: see CommandContext.lookups. */
export interface LookupCache {
  /**
   * A referenced record's status (`active` for a table without one), null when the institution
   * has no such record, undefined when it was not read ahead.
   */
  status(table: string, id: number): string | null | undefined;
  /** The ids of the records holding a unique value; undefined when it was not read ahead. */
  holders(table: string, column: string, value: string): readonly number[] | undefined;
}

export interface CommandOutcome {
  /** 202: accepted, and carried on by the workers (an import). */
  status: 200 | 201 | 202;
  body: JsonObject;
  location?: string;
  /** An update's record as it was, presented as `body`: its event tells what changed. */
  previous?: JsonObject;
  /**
   * The record the write's event carries when it is not the answer (a refund's event carries
   * its gift as GET returns it after the write). Real writes only.
   */
  eventObject?: JsonObject;
  /**
   * The record's number in its event's `object_id`, where its public id is not one (an API key's
   * `seq`).
   */
  eventObjectId?: number;
  /**
   * Fields of `body` that hold a secret told this once (a signing secret, an API key): its
   * stored receipt keeps them sealed (common/secrets.ts), and a replay answers them again.
   */
  secretFields?: readonly string[];
}

/**
 * A create that needs no lookup beyond what the table's own constraints enforce (references by
 * foreign key), so that it can commit in one statement together with its receipt. `insert` is
 * an `INSERT … RETURNING` the values the insert assigns (id, created_at, updated_at) that
 * inserts nothing unless `guard` holds; `present`
 * turns a record into the response body. The body is presented from the validated fields, as a
 * dry run presents it, with the values the insert assigns (id, timestamps) filled in by the
 * statement itself.
 */
export interface SingleStatementCreate {
  insert(guard: FragmentSqlToken): FragmentSqlToken;
  fields: object;
  present(row: object): JsonObject;
  /** The collection path; the new record lives at `<path>/<id>`. */
  path: string;
  /**
   * The row alone, to insert without the guard: for a caller that has checked `references` in
   * the same transaction, with those records locked as the guard would lock them (an import's
   * chunk reads and locks them ahead, and inserts many such rows in one statement:
   * insertRowsFragment). Every rule that needs no lookup has passed already, or this create
   * would be null.
   */
  judged?: JudgedCreate;
  /**
   * A create whose statement writes more than its row (a gift's coded lines): it has no
   * `judged` (its row alone would leave the rest unwritten), and is committed by
   * insertWithReceipts only, with `followUp`'s guard and steps.
   */
  followed?: { judged: JudgedCreate; followUp: StatementFollowUp };
}

/** A single-statement create's row as judged (SingleStatementCreate.judged). */
export interface JudgedCreate {
  table: Table<Stored, object>;
  fields: object;
  /** The records the guard and the table's foreign keys hold the insert to, by reference. */
  references: readonly { reference: Reference; ids: readonly number[] }[];
  /**
   * The base currency the create was judged in (a gift's rate follows from it): the insert
   * holds only while the institution's is still this one (see baseCurrency).
   */
  baseCurrency?: string;
  /**
   * The exchange rate the create took from a hint (hints.ts): the insert holds only while it
   * is still the rate of `currency` in effect on `on`.
   */
  rate?: { currency: string; on: string; rate: string };
}

/**
 * What a create's statement writes after its row, and what must hold for it to: creates of one
 * `kind` share the steps, run once over all of the statement's rows.
 */
export interface StatementFollowUp {
  kind: string;
  /** What the create was judged with, which `guard` confirms. */
  hints: JsonObject;
  /** Whether `hints` (a jsonb expression) still hold, holding what they rely on. */
  guard(hints: FragmentSqlToken): FragmentSqlToken;
  /** Further steps of the statement's WITH (comma-separated) over `created`, a query of `(id, fields jsonb)`. */
  steps(created: FragmentSqlToken): FragmentSqlToken;
  /**
   * A condition (always true) the statement meets before it inserts anything, over `requested`,
   * a query of `(fields jsonb)` of every create: what it holds first, so that the steps lock
   * the rows they share with other writes in the order those writes lock them.
   */
  first(requested: FragmentSqlToken): FragmentSqlToken;
}

/** What a database constraint that fired under a concurrent write means to the client. */
export type ConstraintMeaning = FieldError | (() => ApiError);

/**
 * One write the service can perform. `execute` validates (the only place its rules live) and,
 * unless it is a dry run, persists. The API runs it for dry runs; the worker for real writes.
 */
export interface Command {
  name: string;
  execute(ctx: CommandContext, request: WriteRequest): Promise<CommandOutcome>;
  /** Constraint names that a race can trip after `execute` checked them. */
  constraints?: Record<string, ConstraintMeaning>;
  /**
   * The write as one statement, when the request needs no lookup before it (else null): the
   * worker then commits it and its receipt in one round trip. Whatever the statement refuses
   * (a reference gone, a key that already holds a receipt) leaves nothing behind and is
   * answered by `execute`, which judges everything. Takes no database: it only validates.
   */
  singleStatement?(
    ctx: Omit<CommandContext, 'db'>,
    request: WriteRequest,
  ): SingleStatementCreate | null;
  /** interface.md §7 rule 3: some creates have no natural duplicate protection. */
  requiresIdempotencyKey?(request: WriteRequest): boolean;
}

/** Row lock for the real write; a read-only dry run cannot take one and does not need it. */
export const lockClause = (ctx: CommandContext) =>
  ctx.dryRun ? sql.fragment`` : sql.fragment`FOR UPDATE`;

/** Path parameter `id` as a positive integer, or null when it cannot name a record. */
export function pathId(request: WriteRequest): number | null {
  const raw = request.params.id ?? '';
  if (!/^[1-9]\d{0,15}$/.test(raw)) return null;
  const id = Number(raw);
  return Number.isSafeInteger(id) ? id : null;
}

export const deleted = (object: string, id: number): CommandOutcome => ({
  status: 200,
  body: { id, object, deleted: true },
});

/** The record a dry-run create would return: id 0, timestamps of the dry run. */
export const previewCreated = <T extends object>(ctx: CommandContext, fields: T) => ({
  ...fields,
  id: 0,
  created_at: ctx.now,
  updated_at: ctx.now,
});

/** The record a dry-run update would return. */
export const previewUpdated = <R extends object, T extends object>(
  ctx: CommandContext,
  existing: R,
  fields: T,
) => ({
  ...existing,
  ...fields,
  updated_at: ctx.now,
});

/** Keeps only the named keys: the persisted fields of a merged record. */
export function pick<K extends string>(
  record: Record<string, unknown>,
  keys: readonly K[],
): Record<K, unknown> {
  const out = {} as Record<K, unknown>;
  for (const key of keys) out[key] = record[key] ?? null;
  return out;
}
