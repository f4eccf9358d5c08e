import type { CommonQueryMethods, FragmentSqlToken } from 'slonik';
import { errors } from '../errors.js';
import type { JsonObject } from '../json.js';
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

interface Stored {
  id: number;
  created_at: string;
  updated_at: string;
}

/**
 * What a resource tells the generic create and update commands: its one validation function
 * (run on the merged record, for dry runs and real writes alike) and its queries.
 */
export interface WritableResource<Row extends Stored, Fields extends object> {
  /** Command name prefix, e.g. `students`. */
  name: string;
  /** For messages, e.g. `student`. */
  label: string;
  /** Collection path for Location headers, e.g. `/api/v1/students`. */
  path: string;
  constraints?: Record<string, ConstraintMeaning>;
  validate(ctx: CommandContext, body: JsonObject, existing: Row | null): Promise<Fields>;
  find(
    db: CommonQueryMethods,
    institutionId: number,
    id: number,
    lock: FragmentSqlToken,
  ): Promise<Row | null>;
  insert(db: CommonQueryMethods, institutionId: number, fields: Fields): Promise<Row>;
  update(db: CommonQueryMethods, institutionId: number, id: number, fields: Fields): Promise<Row>;
  present(row: Row): JsonObject;
  /** Refuses any change to a record in a frozen state (409) before its body is judged. */
  guard?(ctx: CommandContext, existing: Row): Promise<void>;
  /**
   * For a create that can commit in one statement (Command.singleStatement): the validation
   * without lookups, null when the body needs one or has an error (`validate` then judges it);
   * and the insert as a fragment returning the row, inserting nothing unless `guard` holds.
   */
  singleStatement?: {
    validate(ctx: Omit<CommandContext, 'db'>, body: JsonObject): Fields | null;
    insert(institutionId: number, fields: Fields, guard: FragmentSqlToken): FragmentSqlToken;
  };
}

/** The record a write targets, locked for the real write; 404 when it is not the caller's. */
export async function findTarget<Row extends Stored>(
  ctx: CommandContext,
  request: WriteRequest,
  resource: Pick<WritableResource<Row, object>, 'find' | 'label'>,
): Promise<Row> {
  const id = pathId(request);
  const existing = id ? await resource.find(ctx.db, ctx.institution.id, id, lockClause(ctx)) : null;
  if (!existing) throw errors.notFound(resource.label);
  return existing;
}

export function createCommand<Row extends Stored, Fields extends object>(
  resource: WritableResource<Row, Fields>,
  options: Pick<Command, 'requiresIdempotencyKey'> = {},
): Command {
  return {
    name: `${resource.name}.create`,
    ...(resource.constraints ? { constraints: resource.constraints } : {}),
    ...options,
    ...(resource.singleStatement ? { singleStatement: singleStatementOf(resource) } : {}),
    async execute(ctx, request) {
      const fields = await resource.validate(ctx, request.body, null);
      // A dry run presents the record it would have written: the same fields, id 0.
      const row = ctx.dryRun
        ? (previewCreated(ctx, fields) as unknown as Row)
        : await resource.insert(ctx.db, ctx.institution.id, fields);
      return { status: 201, body: resource.present(row), location: `${resource.path}/${row.id}` };
    },
  };
}

function singleStatementOf<Row extends Stored, Fields extends object>(
  resource: WritableResource<Row, Fields>,
): NonNullable<Command['singleStatement']> {
  return (ctx, request) => {
    const plan = resource.singleStatement;
    const fields = plan?.validate(ctx, request.body);
    if (!plan || !fields) return null;
    return {
      insert: (guard) => plan.insert(ctx.institution.id, fields, guard),
      fields,
      present: (row) => resource.present(row as Row),
      path: resource.path,
    };
  };
}

export function updateCommand<Row extends Stored, Fields extends object>(
  resource: WritableResource<Row, Fields>,
): Command {
  return {
    name: `${resource.name}.update`,
    ...(resource.constraints ? { constraints: resource.constraints } : {}),
    async execute(ctx, request) {
      const existing = await findTarget(ctx, request, resource);
      await resource.guard?.(ctx, existing);
      const fields = await resource.validate(ctx, request.body, existing);
      const row = ctx.dryRun
        ? previewUpdated(ctx, existing, fields)
        : await resource.update(ctx.db, ctx.institution.id, existing.id, fields);
      return { status: 200, body: resource.present(row) };
    },
  };
}
