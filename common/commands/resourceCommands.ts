import { sql, type FragmentSqlToken } from 'slonik';
import { errors } from '../errors.js';
import type { JsonObject, JsonValue } from '../json.js';
import {
  findRow,
  insertRow,
  insertRowWhere,
  updateRow,
  type Stored,
  type Table,
} from '../resources/table.js';
import {
  requireFields,
  validateBody,
  type BodyValidation,
  type Shape,
} from '../validation/validateBody.js';
import {
  lockClause,
  pathId,
  previewCreated,
  previewUpdated,
  type Command,
  type CommandContext,
  type ConstraintMeaning,
  type WriteRequest,
} from './command.js';

/** Who a resource is: stated once, in its schema.ts, and read by its commands, list and descriptor. */
export interface ResourceIdentity {
  /** Command name prefix, e.g. `award_cycles` (`award_cycles.create`). */
  name: string;
  /** The `object` of its records, e.g. `award_cycle`. */
  object: string;
  /** For messages, e.g. `award cycle`. */
  label: string;
  /** Collection path under /api/v1, e.g. `/award-cycles`. */
  path: string;
}

/** The collection's full path, as Location headers and list envelopes carry it. */
export const apiPath = (identity: Pick<ResourceIdentity, 'path'>) => `/api/v1${identity.path}`;

/** The merged record of a create or an update, judged field by field, and its problems so far. */
export interface RecordCheck<Row> {
  record: Record<string, unknown>;
  validation: BodyValidation;
  existing: Row | null;
  /** The field holds a value that passed its own validation. */
  valid(name: string): boolean;
  /**
   * Present on a real create of a resource that judges in its insert (`judgesInInsert`): a rule
   * may push here the condition it would otherwise look up (and lock), and the insert is made
   * only where every one holds. Where one does not, nothing is inserted and the create is judged
   * again in full, so the client gets the rule's own error.
   */
  insertGuards?: FragmentSqlToken[];
}

/**
 * What a resource tells the generic create and update commands. Validation is one skeleton
 * (validateRecord): each field on its own against `shape`, the merged record's required fields
 * (those marked in `shape`), then the resource's `rules`.
 */
export interface WritableResource<Row extends Stored, Fields extends object> {
  identity: ResourceIdentity;
  table: Table<Row, Fields>;
  /** The writable fields: their schemas and which are always required. */
  shape: Shape;
  /** What a create stores for a field it does not send (documented as each field's default). */
  defaults: Record<string, JsonValue>;
  /** Defaults that depend on the institution (a gift's currency); not documented as defaults. */
  contextDefaults?(ctx: Pick<CommandContext, 'institution'>): Record<string, JsonValue>;
  /** Names a response carries that a body may not set (answered as read-only). */
  readOnly: readonly string[];
  /**
   * The rules across fields, lookups and state machines, run on every create and update (dry
   * or real). They add field errors to `check.validation`, or throw for a 409.
   */
  rules?(ctx: CommandContext, check: RecordCheck<Row>): Promise<void> | void;
  constraints?: Record<string, ConstraintMeaning>;
  present(row: Row): JsonObject;
  /**
   * The stored fields of a judged, valid record, where they are not simply the shape's fields (a
   * gift's `fund_id` is stored as its one designation). By default: `fieldsOf`.
   */
  store?(record: Record<string, unknown>, existing: Row | null): Fields;
  /**
   * What a real create or update changes beyond its own row, in the same transaction (a pledge
   * payment settles its pledge): answers the record as it then is.
   */
  afterWrite?(ctx: CommandContext, row: Row, existing: Row | null): Promise<Row>;
  /**
   * Its rules may leave lookups to a real create's insert (RecordCheck.insertGuards): one
   * statement fewer in the common case.
   */
  judgesInInsert?: boolean;
  /** Refuses any change to a record in a frozen state (409) before its body is judged. */
  guard?(ctx: CommandContext, existing: Row): Promise<void>;
  /**
   * A dry run's record completed with what the database derives whenever it reads the record (a
   * recurring gift's figures from its payments), so that the dry run answers what the write would.
   */
  derive?(ctx: CommandContext, row: Row): Promise<Row>;
}

/** The field-by-field judgement and required fields of a body, before any rule or lookup. */
export function judgeRecord<Row extends Stored, Fields extends object>(
  ctx: Pick<CommandContext, 'institution'>,
  resource: WritableResource<Row, Fields>,
  body: JsonObject,
  existing: Row | null,
): RecordCheck<Row> {
  const validation = validateBody(resource.shape, body, resource.readOnly);
  const record: Record<string, unknown> = {
    ...resource.contextDefaults?.(ctx),
    ...(existing ?? resource.defaults),
    ...validation.values,
  };
  const required = Object.keys(resource.shape).filter((name) => resource.shape[name]!.required);
  requireFields(record, required, validation);
  return {
    record,
    validation,
    existing,
    valid: (name) =>
      !validation.invalid.has(name) && record[name] !== undefined && record[name] !== null,
  };
}

/** The stored fields of a judged record: exactly the keys of the shape, in its order. */
export function fieldsOf<Fields extends object>(
  resource: { shape: Shape },
  record: Record<string, unknown>,
): Fields {
  const fields: Record<string, unknown> = {};
  for (const name of Object.keys(resource.shape)) fields[name] = record[name] ?? null;
  return fields as Fields;
}

/** Every rule of a resource on a create (existing null) or an update; 422 with every problem. */
async function validateRecord<Row extends Stored, Fields extends object>(
  ctx: CommandContext,
  resource: WritableResource<Row, Fields>,
  body: JsonObject,
  existing: Row | null,
): Promise<Fields> {
  const check = judgeRecord(ctx, resource, body, existing);
  await resource.rules?.(ctx, check);
  if (check.validation.errors.length) throw errors.validationFailed(check.validation.errors);
  return storedFields(resource, check);
}

/** What a valid record stores: the resource's `store`, else its shape's fields. */
const storedFields = <Row extends Stored, Fields extends object>(
  resource: WritableResource<Row, Fields>,
  { record, existing }: RecordCheck<Row>,
): Fields => (resource.store ? resource.store(record, existing) : fieldsOf(resource, record));

/**
 * A real create whose rules left their lookups to the insert (WritableResource.judgesInInsert):
 * the row, or null when a rule found a problem or the insert's guard refused, which leaves
 * nothing behind; the caller then judges the create in full.
 */
async function insertJudged<Row extends Stored, Fields extends object>(
  ctx: CommandContext,
  resource: WritableResource<Row, Fields>,
  body: JsonObject,
): Promise<Row | null> {
  const guards: FragmentSqlToken[] = [];
  const check = { ...judgeRecord(ctx, resource, body, null), insertGuards: guards };
  await resource.rules?.(ctx, check);
  if (check.validation.errors.length) return null;
  const fields = storedFields(resource, check);
  return guards.length === 0
    ? insertRow(ctx.db, resource.table, ctx.institution.id, fields)
    : insertRowWhere(
        ctx.db,
        resource.table,
        ctx.institution.id,
        fields,
        sql.fragment`${sql.join(guards, sql.fragment` AND `)}`,
      );
}

/** The record a write targets, locked for the real write; 404 when it is not the caller's. */
export async function findTarget<Row extends Stored>(
  ctx: CommandContext,
  request: WriteRequest,
  resource: Pick<WritableResource<Row, object>, 'table' | 'identity'>,
  lock: FragmentSqlToken = lockClause(ctx),
): Promise<Row> {
  const id = pathId(request);
  const existing = id ? await findRow(ctx.db, resource.table, ctx.institution.id, id, lock) : null;
  if (!existing) throw errors.notFound(resource.identity.label);
  return existing;
}

const written = <Row extends Stored, Fields extends object>(
  ctx: CommandContext,
  resource: WritableResource<Row, Fields>,
  row: Row,
  existing: Row | null,
): Promise<Row> =>
  resource.afterWrite ? resource.afterWrite(ctx, row, existing) : Promise.resolve(row);

/** The record a dry run answers with: the preview, with what the database would derive. */
const preview = <Row extends Stored>(
  ctx: CommandContext,
  resource: Pick<WritableResource<Row, object>, 'derive'>,
  row: Row,
): Promise<Row> | Row => (resource.derive ? resource.derive(ctx, row) : row);

export function createCommand<Row extends Stored, Fields extends object>(
  resource: WritableResource<Row, Fields>,
  options: Pick<Command, 'requiresIdempotencyKey' | 'singleStatement'> = {},
): Command {
  return {
    name: `${resource.identity.name}.create`,
    ...(resource.constraints ? { constraints: resource.constraints } : {}),
    ...options,
    async execute(ctx, request) {
      const judged =
        !ctx.dryRun && resource.judgesInInsert
          ? await insertJudged(ctx, resource, request.body)
          : null;
      // A dry run presents the record it would have written: the same fields, id 0.
      const row = judged
        ? await written(ctx, resource, judged, null)
        : await createJudgedInFull(ctx, resource, request.body);
      return {
        status: 201,
        body: resource.present(row),
        location: `${apiPath(resource.identity)}/${row.id}`,
      };
    },
  };
}

/** A create judged by its rules' lookups (and, for a dry run, presented with id 0). */
async function createJudgedInFull<Row extends Stored, Fields extends object>(
  ctx: CommandContext,
  resource: WritableResource<Row, Fields>,
  body: JsonObject,
): Promise<Row> {
  const fields = await validateRecord(ctx, resource, body, null);
  return ctx.dryRun
    ? await preview(ctx, resource, previewCreated(ctx, fields) as unknown as Row)
    : await written(
        ctx,
        resource,
        await insertRow(ctx.db, resource.table, ctx.institution.id, fields),
        null,
      );
}

export function updateCommand<Row extends Stored, Fields extends object>(
  resource: WritableResource<Row, Fields>,
): Command {
  return {
    name: `${resource.identity.name}.update`,
    ...(resource.constraints ? { constraints: resource.constraints } : {}),
    async execute(ctx, request) {
      const existing = await findTarget(ctx, request, resource);
      await resource.guard?.(ctx, existing);
      const fields = await validateRecord(ctx, resource, request.body, existing);
      const row = ctx.dryRun
        ? await preview(ctx, resource, previewUpdated(ctx, existing, fields))
        : await written(
            ctx,
            resource,
            await updateRow(ctx.db, resource.table, ctx.institution.id, existing.id, fields),
            existing,
          );
      return { status: 200, body: resource.present(row), previous: resource.present(existing) };
    },
  };
}
