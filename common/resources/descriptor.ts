import type { CommonQueryMethods } from 'slonik';
import type { z } from 'zod';
import type { Command } from '../commands/command.js';
import type { ResourceIdentity } from '../commands/resourceCommands.js';
import type { JsonObject, JsonValue } from '../json.js';
import type { ListSpec } from '../pagination/listSpec.js';
import type { Shape } from '../validation/validateBody.js';

/** Reads one record of the caller's institution, presented; null when it is not theirs or not there. */
export type Retrieval = (
  db: CommonQueryMethods,
  institutionId: number,
  id: number,
) => Promise<JsonObject | null>;

/** The 409s a resource's own rules answer with, as its documentation lists them. */
export type ConflictCode = 'invalid_state_transition' | 'resource_archived' | 'resource_in_use';

/** What a list's documentation says beyond its ListSpec. */
export interface ListText {
  /** Notes on the filters, by filter name. */
  filterNotes: Record<string, string>;
}

/** A list that is not a resource's collection (a report), mounted under the resource's path. */
export interface ReportDescriptor {
  /** Under /api/v1, e.g. `/scholarships/awarded-students`. */
  path: string;
  list: ListSpec<unknown>;
  /** The schema of one row of the report. */
  item: z.ZodType;
  text: ListText & {
    tag: string;
    /** Component schema name of a row. */
    component: string;
    /** What the reports of the tag are, as the tag's description. */
    tagDescription: string;
    summary: string;
    description: string;
  };
}

/** The documentation words of a resource: what the code cannot tell the OpenAPI document. */
export interface ResourceText extends ListText {
  tag: string;
  /** Component schema name (`AwardCycle`, and from it `AwardCycleCreate`, ...). */
  component: string;
  /** Rules across fields and state machines, for create and update (paragraphs). */
  rules: string;
  /** Per-field notes of the request bodies, by field name. */
  notes: Record<string, string>;
  /** 409 codes particular to the resource, by operation. */
  conflicts?: { update?: ConflictCode[]; delete?: ConflictCode[] };
  deleteNote?: string;
  /**
   * A realistic body for each write, shown on the docs page: each succeeds as sent (dry run or
   * real) in an institution whose records with id 1 exist (as in `npm run demo`).
   */
  examples: { create: JsonObject; update: JsonObject };
}

/**
 * Everything about one resource that the API, the worker and the OpenAPI document need. The
 * route table, the command registry, retrieval and the document are all derived from the list
 * of descriptors (common/resources/index.ts): a resource is one folder, one line in that list
 * and one migration.
 */
export interface ResourceDescriptor extends ResourceIdentity {
  /** The request bodies' fields (create and update). */
  shape: Shape;
  /** What a create stores for a field it does not send. */
  defaults: Record<string, JsonValue>;
  /** The record as create, update and lists return it. */
  response: z.ZodType;
  /** GET /things/{id}, where it returns more than the other operations. */
  detail?: z.ZodType;
  commands: { create: Command; update: Command; delete?: Command };
  list: ListSpec<unknown>;
  retrieve: Retrieval;
  /** Lists mounted under the resource's path (before `/{id}`). */
  reports?: readonly ReportDescriptor[];
  text: ResourceText;
}
