import type { CommonQueryMethods, FragmentSqlToken } from 'slonik';
import type { PermissionGroup } from '../auth/permissions.js';
import type { z } from 'zod';
import type { Command } from '../commands/command.js';
import type { ResourceIdentity } from '../commands/resourceCommands.js';
import type { JsonObject, JsonValue } from '../json.js';
import type { ListSpec } from '../pagination/listSpec.js';
import type { Shape } from '../validation/validateBody.js';

import type { Retrieval } from './table.js';

export type { Retrieval } from './table.js';

/** The 409s a resource's own rules answer with, as its documentation lists them. */
export type ConflictCode =
  | 'invalid_state_transition'
  | 'resource_archived'
  | 'resource_in_use'
  | 'gift_locked'
  | 'donor_merged';

/** What a list's documentation says beyond its ListSpec. */
export interface ListText {
  /** Notes on the filters, by filter name. */
  filterNotes: Record<string, string>;
}

/** A list that is not a resource's collection (a report), mounted under the resource's path. */
export interface ReportDescriptor {
  /** Under /api/v1, e.g. `/scholarships/awarded-students`. */
  path: string;
  /** The group whose read it needs, where not the resource's (`reports` under /reports). */
  permission?: PermissionGroup;
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
   * real) in an institution whose records with id 1 exist (as in `npm run demo`). A resource
   * without update has no update example.
   */
  examples: { create?: JsonObject; update?: JsonObject };
}

/**
 * Everything about one resource that the API, the worker and the OpenAPI document need. The
 * route table, the command registry, retrieval and the document are all derived from the list
 * of descriptors (common/resources/index.ts): a resource is one folder, one line in that list
 * and one migration.
 */
export interface ResourceDescriptor extends ResourceIdentity {
  /**
   * The permission group of every route of the resource (trust.md §1): its GETs need
   * `<group>:read`, its other methods `<group>:write`. Required, so that a resource cannot be
   * added without saying who may use it (deny by default).
   */
  permission: PermissionGroup;
  /** The request bodies' fields (create and update). */
  shape: Shape;
  /** What a create stores for a field it does not send. */
  defaults: Record<string, JsonValue>;
  /** The record as create, update and lists return it. */
  response: z.ZodType;
  /** GET /things/{id}, where it returns more than the other operations. */
  detail?: z.ZodType;
  /**
   * A resource without update (receipts) changes only through its actions; one without create
   * (duplicate pairs, which donor writes make) only through its actions too.
   */
  commands: { create?: Command; update?: Command; delete?: Command };
  /**
   * GET `<path>`: the collection on the cursor engine. Absent where the spec names no list of the
   * whole collection, only lists under other records (`listedUnder`: a donor's relationships).
   */
  list?: ListSpec<unknown>;
  /** Lists of the resource's records under another resource's record. */
  listedUnder?: readonly RecordListDescriptor[];
  retrieve: Retrieval;
  /** GET `<path>/{id}` with `Accept: application/pdf`: the record as a printable document. */
  document?: DocumentDescriptor;
  /**
   * What a create is called in its event (`<object>.<this>`) where the record is not simply
   * created: a receipt is `issued` (integration.md §1). Default `created`.
   */
  createdAs?: string;
  /** A create answered 202: the record is made at once, and the workers carry it out (a run). */
  createdAccepted?: true;
  /**
   * An update that changes `field` is `<object>.<happened>` instead of `<object>.updated`, with
   * the same `previous_attributes` (integration.md §1: `award_cycle.status_changed`).
   */
  updatedAs?: { field: string; happened: string };
  /**
   * Events of this resource's records made by another resource's write that changes them in a
   * way the spec names (a gift payment that brings its pledge's balance to 0:
   * `pledge.fulfilled`). They commit with that write's own event, with its request and key.
   */
  consequences?: readonly ConsequenceDescriptor[];
  /** Lists mounted under the resource's path (before `/{id}`). */
  reports?: readonly ReportDescriptor[];
  /** Reports that are one object (GET at their own path, with query parameters). */
  summaries?: readonly InstitutionReadDescriptor[];
  /** Writes on one record beyond update and delete: POST `<path>/{id}/<name>`. */
  actions?: readonly ActionDescriptor[];
  /** Records that belong to one record: GET and POST `<path>/{id}/<name>`. */
  children?: readonly ChildCollectionDescriptor[];
  /** Writes on a record listed under one of the resource's records (a webhook delivery's retry). */
  nestedActions?: readonly NestedActionDescriptor[];
  /** Files made of one record, streamed: GET `<path>/{id}/<name>` (a run's documents.zip). */
  downloads?: readonly RecordDownloadDescriptor[];
  /** Reads about one record that are neither the record nor a list: GET `<path>/{id}/<name>`. */
  reads?: readonly RecordReadDescriptor[];
  text: ResourceText;
}

/**
 * A record that is also a document people print (a receipt, a giving statement): GET of the
 * record answers it as a PDF when the client's `Accept` prefers `application/pdf`.
 */
export interface DocumentDescriptor {
  /** The PDF of one record of the caller's institution; null when it is not theirs. */
  render(db: CommonQueryMethods, institutionId: number, id: number): Promise<Buffer | null>;
  /** The download's file name, e.g. `receipt-12.pdf`. */
  filename(id: number): string;
  /** What the PDF shows, for the document. */
  description: string;
}

/**
 * A file made of one record and its own, streamed as it is made (every PDF of a run in one
 * archive): GET `<path>/{id}/<name>`, 404 when the record is not the caller's.
 */
export interface RecordDownloadDescriptor {
  /** The path segment after the record's id, e.g. `documents.zip`. */
  name: string;
  contentType: string;
  filename(id: number): string;
  /**
   * The writer of the file of one record of the institution, which writes it into `out` and
   * ends it; null when the record is not theirs (nothing is written then).
   */
  open(
    db: CommonQueryMethods,
    institutionId: number,
    id: number,
  ): Promise<((out: NodeJS.WritableStream) => Promise<void>) | null>;
  text: { operationId: string; summary: string; description: string };
}

/** A query parameter of a record read: how it is parsed and how the document shows it. */
export interface ReadParameter {
  /** Absent is 400 `parameter_missing`; else an absent parameter reads as null. */
  required: boolean;
  /** The value as the read uses it, or a thrown 400 `invalid_parameter` (errors.invalidParameter). */
  parse(param: string, raw: string): string | null;
  /** The parameter's JSON Schema in the document. */
  schema: JsonObject;
  description: string;
}

/**
 * A computed answer about one record (a donor's eligibility for a channel): GET
 * `<path>/{id}/<name>` with its query parameters, 404 when the record is not the caller's.
 */
export interface RecordReadDescriptor {
  /** The path segment after the record's id, e.g. `eligibility`. */
  name: string;
  query: Record<string, ReadParameter>;
  /** The answer; null when the record is not the institution's (404). */
  read(
    db: CommonQueryMethods,
    institutionId: number,
    id: number,
    query: Record<string, string | null>,
  ): Promise<JsonObject | null>;
  response: z.ZodType;
  text: { component: string; operationId: string; summary: string; description: string };
}

/**
 * A computed answer about the institution's records that is one object, not a list (donor
 * retention in a fiscal year): GET `<path>` with its query parameters.
 */
export interface InstitutionReadDescriptor {
  /** Under /api/v1, e.g. `/reports/retention`. */
  path: string;
  /** The group whose read it needs, where not the resource's (`reports` under /reports). */
  permission?: PermissionGroup;
  query: Record<string, ReadParameter>;
  read(
    db: CommonQueryMethods,
    institutionId: number,
    query: Record<string, string | null>,
  ): Promise<JsonObject>;
  response: z.ZodType;
  text: {
    tag: string;
    component: string;
    operationId: string;
    summary: string;
    description: string;
  };
}

/**
 * A state change of one record that is not a field edit (a gift's void, a receipt's void):
 * POST `<path>/{id}/<name>` with a small body, answered 200 with the record as GET returns it.
 */
export interface ActionDescriptor {
  /** The path segment after the record's id, e.g. `void`. */
  name: string;
  /** The action done, as its event names it (`<object>.<this>`), e.g. `voided`. */
  happened: string;
  command: Command;
  /** The request body's fields. */
  shape: Shape;
  defaults: Record<string, JsonValue>;
  /**
   * An answer that is not the record as GET returns it (a merge answers the survivor with what
   * it moved): its schema, component name and description.
   */
  answer?: { component: string; schema: z.ZodType; description: string };
  text: {
    /** Component schema name of the body, e.g. `GiftVoid`. */
    component: string;
    summary: string;
    /** What it does and its rules (paragraphs). */
    description: string;
    notes: Record<string, string>;
    conflicts: ConflictCode[];
    /** A body that succeeds (dry run or real) on record 1 of the demo institution. */
    example: JsonObject;
  };
}

/**
 * Records that belong to one record of the resource and are made only through it (a gift's
 * refunds): GET `<path>/{id}/<name>` lists them (a cursor list of the one parent's records, 404
 * when the parent is not the caller's) and POST `<path>/{id}/<name>` makes one (201).
 */
export interface ChildCollectionDescriptor {
  /** The path segment after the parent's id, e.g. `refunds`. */
  name: string;
  /** For messages and the document, e.g. `refund`. */
  label: string;
  /** The `object` of its records, e.g. `gift_refund`. */
  object: string;
  /**
   * What a create does to the parent, when its event is the parent's (integration.md §1: a
   * refund is `gift.refunded`, carrying the gift as GET returns it after the write); else the
   * event is `<object>.created`.
   */
  parentHappened?: string;
  /** The parent, whose row must be the caller's for any of its routes to answer (else 404). */
  parent: { table: string; label: string };
  /** The path parameter naming one record, e.g. `refund_id` (GET `<path>/{id}/<name>/{param}`). */
  param: string;
  /**
   * One record of one parent, as create and the list present it; null when there is none of
   * that id under that parent (the target of a create's `Location`).
   */
  retrieve(
    db: CommonQueryMethods,
    institutionId: number,
    parentId: number,
    id: number,
  ): Promise<JsonObject | null>;
  create: Command;
  shape: Shape;
  defaults: Record<string, JsonValue>;
  /** A record as create and the list return it. */
  response: z.ZodType;
  /**
   * The records of one parent: `endpoint` is the Express path (`/api/v1/gifts/:id/refunds`);
   * the handler pins it to the parent's id and so binds every cursor to that parent.
   */
  list: ListSpec<unknown>;
  /** The list's rows of one parent: the condition that ties a row to it. */
  ofParent(parentId: number): FragmentSqlToken;
  text: ListText & {
    /** Component schema name of a record, e.g. `GiftRefund` (and `GiftRefundCreate`). */
    component: string;
    rules: string;
    notes: Record<string, string>;
    conflicts: ConflictCode[];
    example: JsonObject;
  };
}

/**
 * A write on a record that belongs to one of the resource's records and is listed under it:
 * POST `<path>/{id}/<under>/{<param>}/<name>` with an empty body, answered 200 with that record.
 * Its event is `<object>.<happened>`, carrying the record as answered.
 */
export interface NestedActionDescriptor {
  /** The list the record belongs to, e.g. `deliveries`. */
  under: string;
  /** The path parameter naming the record, e.g. `delivery_id`. */
  param: string;
  /** The path segment after it, e.g. `retry`. */
  name: string;
  /** The `object` of the record, e.g. `webhook_delivery`. */
  object: string;
  /** For messages and the document, e.g. `webhook delivery`. */
  label: string;
  /** The action done, as its event names it (`<object>.<this>`), e.g. `retried`. */
  happened: string;
  command: Command;
  /** The answer: the record after the write. */
  response: z.ZodType;
  text: {
    /** Component schema name of the answer, e.g. `WebhookDelivery`. */
    component: string;
    operationId: string;
    summary: string;
    description: string;
    paramDescription: string;
  };
}

/**
 * The resource's records that concern one record of another resource, as that record sees them
 * (GET `<parentPath>/{id}/<name>`: a donor's relationships, each from the donor's side): a
 * cursor list of one parent's records, 404 when the parent is not the caller's.
 */
export interface RecordListDescriptor {
  /** The other resource's collection path, e.g. `/donors`. */
  parentPath: string;
  /** The path segment after the parent's id, e.g. `relationships`. */
  name: string;
  /** The parent, whose row must be the caller's for the list to answer (else 404). */
  parent: { table: string; label: string };
  /** `endpoint` is the Express path (`/api/v1/donors/:id/relationships`). */
  list: ListSpec<unknown>;
  /** The list's rows of one parent: the condition that ties a row to it. */
  ofParent(parentId: number): FragmentSqlToken;
  /**
   * An entry where the list shows the record otherwise than GET does (a duplicate pair, from a
   * donor, is a `duplicate_candidate`), with its component name; else the resource's response.
   */
  item?: { response: z.ZodType; component: string };
  text: ListText & { operationId: string; summary: string; description: string };
}

/** An event of a record made by a write of another record (see `consequences`). */
export interface ConsequenceDescriptor {
  /** `<object>.<this>`, e.g. `fulfilled`. */
  happened: string;
  /** The write that makes it, for the document: e.g. `POST /api/v1/gifts` (a payment). */
  by: { method: 'POST' | 'PATCH' | 'DELETE'; path: string };
}
