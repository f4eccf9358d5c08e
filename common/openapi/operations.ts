import type { JsonObject } from '../json.js';
import type { z } from 'zod';
import { eventResponse } from '../events/event.js';
import { eventTypes } from '../events/types.js';
import { webhookDeliveryAttemptResponse } from '../webhooks/attempts.js';
import { webhookDeliveryResponse } from '../webhooks/deliveries.js';
import type {
  ActionDescriptor,
  ChildCollectionDescriptor,
  NestedActionDescriptor,
  RecordListDescriptor,
  RecordDownloadDescriptor,
  RecordReadDescriptor,
  ResourceDescriptor,
} from '../resources/descriptor.js';
import type { ErrorCode } from './errorCatalogue.js';
import { schemaRef, type JsonSchema } from './jsonSchema.js';
import { institutionResponse } from '../institutions.js';
import { institutionShape, institutionUpdateText } from '../institutionUpdate.js';
import {
  filterParameters,
  headerRef,
  idPathParameter,
  pageParameters,
  writeParameters,
} from './parameters.js';
import { requestBodySchema, type BodyDoc } from './requestBody.js';
import { deletedResponse, listEnvelope } from '../resources/responseFields.js';
import type { DocumentedRoute, EndpointDoc } from './routeDoc.js';
import {
  anyError,
  authentication,
  bodyWriteErrors,
  errorResponses,
  ourSide,
  pascal,
  recordWriteErrors,
  success,
  type Needs,
} from './responses.js';
import { importOperation } from './imports.js';
import { apiKeyOperation } from './apiKeys.js';
import { auditEventListOperation } from './audit.js';

// "an award", "a user": by sound, which for these labels is the first letter but for a long u.
const article = (label: string) => (/^([aeio]|u(?!s))/.test(label) ? `an ${label}` : `a ${label}`);

/** What the operations of a resource read of its descriptor. */
interface ResourceDoc extends BodyDoc {
  label: string;
  tag: string;
  component: string;
  response: z.ZodType;
  detail?: z.ZodType;
  rules: string;
  conflicts?: { update?: ErrorCode[]; delete?: ErrorCode[] };
  deleteNote?: string;
  filterNotes: Record<string, string>;
}

const docOf = (resource: ResourceDescriptor): ResourceDoc => ({
  ...resource.text,
  label: resource.label,
  shape: resource.shape,
  defaults: resource.defaults,
  response: resource.response,
  ...(resource.detail ? { detail: resource.detail } : {}),
});

function writeOperation(
  route: DocumentedRoute,
  { action, command, resource }: Extract<EndpointDoc, { kind: 'write' }>,
  needs: Needs,
): JsonSchema {
  const doc = docOf(resource);
  const a = article(doc.label);
  const parameters = [
    ...(route.path.includes(':id') ? [idPathParameter(doc.label)] : []),
    ...writeParameters,
  ];
  const idempotency: ErrorCode[] = command.requiresIdempotencyKey
    ? ['invalid_idempotency_key', 'idempotency_key_required']
    : ['invalid_idempotency_key'];

  if (action === 'delete') {
    const component = `${doc.component}Deleted`;
    needs.responses.set(component, deletedResponse(doc.label.replaceAll(' ', '_')));
    return {
      operationId: `delete${doc.component}`,
      summary: `Delete ${a}`,
      description: `${doc.deleteNote ?? ''}${writes}`.trim(),
      tags: [doc.tag],
      parameters,
      responses: {
        '200': success(
          `The ${doc.label} is deleted (on a dry run: would be).`,
          schemaRef(component),
          { 'Idempotent-Replayed': headerRef('IdempotentReplayed') },
        ),
        ...errorResponses(
          [
            'invalid_parameter',
            ...idempotency,
            ...authentication,
            'resource_not_found',
            'idempotency_key_in_flight',
            ...(doc.conflicts?.delete ?? []),
            'idempotency_key_request_mismatch',
            ...ourSide,
            'write_timeout',
          ],
          needs,
        ),
        ...anyError,
      },
    };
  }

  const create = action === 'create';
  const body = `${doc.component}${create ? 'Create' : 'Update'}`;
  needs.bodies.set(
    body,
    requestBodySchema(
      doc,
      create,
      create
        ? `A new ${doc.label}.`
        : `Any subset of the writable fields; the merged record is validated as a create.`,
    ),
  );
  needs.responses.set(doc.component, doc.response);
  return {
    operationId: `${create ? 'create' : 'update'}${doc.component}`,
    summary: `${create ? 'Create' : 'Update'} ${a}`,
    description: `${doc.rules}${writes}`,
    tags: [doc.tag],
    parameters,
    requestBody: {
      required: true,
      content: {
        'application/json': {
          schema: schemaRef(body),
          example: create ? resource.text.examples.create : resource.text.examples.update,
        },
      },
    },
    responses: {
      [create ? (resource.createdAccepted ? '202' : '201') : '200']: success(
        create
          ? `The ${resource.createdAccepted ? 'accepted' : 'created'} ${doc.label}; on a dry run the ${doc.label} that would be ${resource.createdAccepted ? 'accepted' : 'created'}, with id 0 and no Location.`
          : `The updated ${doc.label}; on a dry run the ${doc.label} as it would be.`,
        schemaRef(doc.component),
        {
          ...(create ? { Location: headerRef('Location') } : {}),
          'Idempotent-Replayed': headerRef('IdempotentReplayed'),
        },
      ),
      ...errorResponses(
        bodyWriteErrors({
          idempotency,
          extra: create ? [] : ['resource_not_found', ...(doc.conflicts?.update ?? [])],
        }),
        needs,
      ),
      ...anyError,
    },
  };
}

function listOperation(
  route: DocumentedRoute,
  { list, resource: descriptor, report: reportDescriptor }: Extract<EndpointDoc, { kind: 'list' }>,
  needs: Needs,
): JsonSchema {
  if (`/api/v1${route.path}` !== list.endpoint)
    throw new Error(`the list at ${route.path} names its endpoint ${list.endpoint}`);
  const report = reportDescriptor?.text;
  const resource = report ? undefined : docOf(descriptor);
  const component = resource?.component ?? report!.component;
  const item = resource?.response ?? reportDescriptor!.item;
  needs.responses.set(component, item);
  needs.responses.set(`${component}List`, listEnvelope(list.endpoint, item));
  const plural = pascal(route.path.split('/').at(-1)!);
  return {
    operationId: `list${plural}`,
    summary: report?.summary ?? `List ${resource!.tag.toLowerCase()}`,
    description: `${report?.description ?? `The institution’s ${resource!.tag.toLowerCase()}, newest first.`}\n\nCursor pagination: see the introduction.`,
    tags: [resource?.tag ?? report!.tag],
    parameters: [
      ...pageParameters,
      ...filterParameters(list, resource?.filterNotes ?? report!.filterNotes),
    ],
    responses: {
      '200': report
        ? {
            ...success(
              "One page of the report; with `Accept: text/csv`, the whole report for its filters as CSV (a header row of the row’s fields, nested ones as `object.field`; cells a spreadsheet would run as formulas prefixed with `'`), which takes no `limit` or cursor.",
              schemaRef(`${component}List`),
            ),
            content: {
              'application/json': { schema: schemaRef(`${component}List`) },
              'text/csv': { schema: { type: 'string' } },
            },
          }
        : success('One page of the list.', schemaRef(`${component}List`)),
      ...errorResponses(
        listErrors({ query: list.required?.length ? ['parameter_missing'] : [] }),
        needs,
      ),
      ...anyError,
    },
  };
}

function retrieveOperation(resource: ResourceDescriptor, needs: Needs): JsonSchema {
  const doc = docOf(resource);
  const component = doc.detail ? `${doc.component}Detail` : doc.component;
  needs.responses.set(component, doc.detail ?? doc.response);
  return {
    operationId: `retrieve${doc.component}`,
    summary: `Retrieve ${article(doc.label)}`,
    description: `One ${doc.label} of the caller’s institution.${doc.detail ? ' Includes read-only fields that other operations leave out.' : ''}`,
    tags: [doc.tag],
    parameters: [idPathParameter(doc.label)],
    responses: {
      '200': resource.document
        ? {
            ...success(
              `The ${doc.label}; with \`Accept: application/pdf\`, ${resource.document.description}`,
              schemaRef(component),
            ),
            content: {
              'application/json': { schema: schemaRef(component) },
              'application/pdf': { schema: { type: 'string', format: 'binary' } },
            },
          }
        : success(`The ${doc.label}.`, schemaRef(component)),
      ...errorResponses(
        [
          'invalid_parameter',
          ...authentication,
          'resource_not_found',
          ...(resource.document ? (['not_acceptable'] as const) : []),
          ...ourSide,
        ],
        needs,
      ),
      ...anyError,
    },
  };
}

function institutionOperation(needs: Needs): JsonSchema {
  needs.responses.set('Institution', institutionResponse);
  return {
    operationId: 'retrieveInstitution',
    summary: 'Retrieve the caller’s institution',
    description:
      'The institution the API key belongs to, with its settings (`PATCH /institution` changes them). Institutions and keys are created by the operator’s command-line tool, not through the API.',
    tags: ['Institution'],
    responses: {
      '200': success('The institution.', schemaRef('Institution')),
      ...errorResponses(['invalid_parameter', ...authentication, ...ourSide], needs),
      ...anyError,
    },
  };
}

function institutionUpdateOperation(needs: Needs): JsonSchema {
  needs.responses.set('Institution', institutionResponse);
  needs.bodies.set(
    'InstitutionUpdate',
    requestBodySchema(
      { shape: institutionShape, defaults: {}, notes: institutionUpdateText.notes },
      false,
      'Any subset of the settings; an empty body changes nothing.',
    ),
  );
  return {
    operationId: 'updateInstitution',
    summary: 'Update the caller’s institution',
    description:
      [
        'Changes the settings of the institution the API key belongs to (never another’s): `currency`, `fiscal_year_start_month` and `consent_mode`. `name` is the operator’s (read-only here).',
        'The base `currency` can change only while the institution has no gift, pledge or recurring gift: otherwise 409 `resource_in_use`, and nothing changes. A fiscal year is named by the calendar year in which it ends: with `fiscal_year_start_month` 7, FY2027 runs 2026-07-01 to 2027-06-30.',
        'A committed change makes one `institution.updated` event, with `previous_attributes`.',
      ].join('\n\n') + writes,
    tags: ['Institution'],
    parameters: writeParameters,
    requestBody: {
      required: true,
      content: {
        'application/json': {
          schema: schemaRef('InstitutionUpdate'),
          example: institutionUpdateText.example,
        },
      },
    },
    responses: {
      '200': success(
        'The updated institution; on a dry run the institution as it would be.',
        schemaRef('Institution'),
        { 'Idempotent-Replayed': headerRef('IdempotentReplayed') },
      ),
      ...errorResponses(bodyWriteErrors({ extra: ['resource_in_use'] }), needs),
      ...anyError,
    },
  };
}

/** The Events tag: what an event is, and every type with the write that emits it. */
export function eventsTagDescription(): string {
  const happened = ({ type, request, changes, consequence }: (typeof eventTypes)[number]) => {
    const what = type.split('.')[1]!.replaceAll('_', ' ');
    if (changes)
      return `${article(request.label)}’s \`${changes}\` changed (instead of \`updated\`)`;
    if (consequence)
      return `${article(request.label)} was ${what}, by this write of another record`;
    return `${article(request.label)} was ${what}`;
  };
  const types = eventTypes.map(
    (eventType) =>
      `| \`${eventType.type}\` | ${happened(eventType)} | \`${eventType.request.method} ${eventType.request.path}\` |`,
  );
  return [
    'Every committed write makes exactly one event, in the same transaction as the write: never a dry run, an idempotent replay or a refused write. `data.object` is the record as the write answered it; an update adds `data.previous_attributes`, the old values of the fields it changed. Events are kept for `EVENT_RETENTION_DAYS` (default 90), then pruned. An institution sees only its own events.',
    '**One rule for the types.** A write makes one event for the record it writes, named `<object>.<what happened>`; an update that changes `status` where the resource gives that its own type (`award_cycle.status_changed`) is that type, with the same `previous_attributes`, instead of `<object>.updated`. A write also makes one event for each other record whose state it changes in a way the specification names, in the same transaction and with the same `request_id` and `api_key_id`: a gift payment that brings its pledge’s balance to 0 makes `pledge.fulfilled`, whose `data.object` is the pledge as `GET /pledges/{id}` returns it. (Writing off a pledge is the pledge’s own write: `pledge.written_off`.)',
    '| type | what happened | the write |\n|---|---|---|\n' + types.join('\n'),
  ].join('\n\n');
}

const eventListDescription = [
  'The institution’s events, newest first: the audit trail of every committed write. `object_type` with `object_id` gives one record’s whole history.',
  'Cursor pagination: see the introduction.',
].join('\n\n');

function eventListOperation(
  { list }: Extract<EndpointDoc, { kind: 'event-list' }>,
  needs: Needs,
): JsonSchema {
  needs.responses.set('Event', eventResponse);
  needs.responses.set('EventList', listEnvelope(list.endpoint, eventResponse));
  return {
    operationId: 'listEvents',
    summary: 'List events',
    description: eventListDescription,
    tags: ['Events'],
    parameters: [
      ...pageParameters,
      ...filterParameters(list, {
        type: 'One event type (`gift.created`), or every type of one object (`gift.*`); an unknown type is 400 `invalid_parameter`.',
        object_type: 'Events of records of this `object`.',
        object_id:
          'Events of this record: with `object_type` (without it, 400 `parameter_missing`).',
        created_from: 'Events made at or after this instant.',
        created_to: 'Events made at or before this instant.',
      }),
    ],
    responses: {
      '200': success('One page of the list.', schemaRef('EventList')),
      ...errorResponses(
        ['invalid_parameter', 'parameter_missing', 'invalid_cursor', ...authentication, ...ourSide],
        needs,
      ),
      ...anyError,
    },
  };
}

function webhookDeliveryListOperation(
  { list }: Extract<EndpointDoc, { kind: 'webhook-delivery-list' }>,
  needs: Needs,
): JsonSchema {
  needs.responses.set('WebhookDelivery', webhookDeliveryResponse);
  needs.responses.set('WebhookDeliveryList', listEnvelope(list.endpoint, webhookDeliveryResponse));
  return {
    operationId: 'listWebhookDeliveries',
    summary: 'List a webhook endpoint’s deliveries',
    description: [
      'One row per event sent (or to be sent) to the endpoint, newest first, with its latest attempt: `attempts`, `status_code`, `duration_ms`, `error` and `next_attempt_at` (every attempt: `GET /webhook-endpoints/{id}/deliveries/{delivery_id}/attempts`). An endpoint of another institution is as absent as a missing one (404).',
      'Cursor pagination: see the introduction.',
    ].join('\n\n'),
    tags: ['Webhook endpoints'],
    parameters: [
      idPathParameter('webhook endpoint'),
      ...pageParameters,
      ...filterParameters(list, { status: '`pending`, `delivered` or `failed`.' }),
    ],
    responses: {
      '200': success('One page of the list.', schemaRef('WebhookDeliveryList')),
      ...errorResponses(listErrors({ extra: ['resource_not_found'] }), needs),
      ...anyError,
    },
  };
}

function webhookAttemptListOperation(
  { list }: Extract<EndpointDoc, { kind: 'webhook-attempt-list' }>,
  needs: Needs,
): JsonSchema {
  needs.responses.set('WebhookDeliveryAttempt', webhookDeliveryAttemptResponse);
  needs.responses.set(
    'WebhookDeliveryAttemptList',
    listEnvelope(list.endpoint, webhookDeliveryAttemptResponse),
  );
  return {
    operationId: 'listWebhookDeliveryAttempts',
    summary: 'List a webhook delivery’s attempts',
    description: [
      'Every attempt of one delivery, newest first: `status_code`, `duration_ms`, `error` and `started_at`. Kept for `EVENT_RETENTION_DAYS`, as the events are. An endpoint or delivery of another institution is as absent as a missing one (404).',
      'Cursor pagination: see the introduction. A cursor belongs to its delivery.',
    ].join('\n\n'),
    tags: ['Webhook endpoints'],
    parameters: [
      idPathParameter('webhook endpoint'),
      {
        name: 'delivery_id',
        in: 'path',
        required: true,
        description: 'The delivery’s id, as the endpoint’s deliveries list gives it.',
        schema: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
        example: 1,
      },
      ...pageParameters,
    ],
    responses: {
      '200': success('One page of the list.', schemaRef('WebhookDeliveryAttemptList')),
      ...errorResponses(listErrors({ extra: ['resource_not_found'] }), needs),
      ...anyError,
    },
  };
}

/** POST /things/{id}/<under>/{<param>}/<name>: a write on a record listed under a record. */
function nestedActionOperation(
  resource: ResourceDescriptor,
  action: NestedActionDescriptor,
  needs: Needs,
): JsonSchema {
  needs.responses.set(action.text.component, action.response);
  return {
    operationId: action.text.operationId,
    summary: action.text.summary,
    description: `${action.text.description}${writes}`,
    tags: [resource.text.tag],
    parameters: [
      idPathParameter(resource.label),
      {
        name: action.param,
        in: 'path',
        required: true,
        description: action.text.paramDescription,
        schema: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
        example: 1,
      },
      ...writeParameters,
    ],
    requestBody: {
      required: true,
      content: {
        'application/json': {
          schema: { type: 'object', additionalProperties: false, maxProperties: 0 },
          example: {},
        },
      },
    },
    responses: {
      '200': success(
        `The ${action.label} after the change; on a dry run the ${action.label} as it would be.`,
        schemaRef(action.text.component),
        { 'Idempotent-Replayed': headerRef('IdempotentReplayed') },
      ),
      ...errorResponses(recordWriteErrors([]), needs),
      ...anyError,
    },
  };
}

function eventRetrieveOperation(needs: Needs): JsonSchema {
  needs.responses.set('Event', eventResponse);
  return {
    operationId: 'retrieveEvent',
    summary: 'Retrieve an event',
    description: 'One event of the caller’s institution.',
    tags: ['Events'],
    parameters: [
      {
        name: 'id',
        in: 'path',
        required: true,
        description:
          'The event’s id (`evt_…`). An id of another institution is as absent as a missing one (404).',
        schema: { type: 'string', maxLength: 100 },
        example: 'evt_5f2c8e1a9b0d4c7e3a6f1b2d4c7e3a6f',
      },
    ],
    responses: {
      '200': success('The event.', schemaRef('Event')),
      ...errorResponses(
        ['invalid_parameter', ...authentication, 'resource_not_found', ...ourSide],
        needs,
      ),
      ...anyError,
    },
  };
}

const writes =
  '\n\nSupports a dry run (`dry_run` / `Dry-Run`) and an `Idempotency-Key`: see the introduction.';

/** The errors of a list on the cursor engine, of a record's (`resource_not_found`) or not. */
const listErrors = ({
  query = [],
  extra = [],
}: { query?: readonly ErrorCode[]; extra?: readonly ErrorCode[] } = {}): ErrorCode[] => [
  'invalid_parameter',
  ...query,
  'invalid_cursor',
  ...authentication,
  ...extra,
  ...ourSide,
];

const lowerFirst = (text: string) => text.charAt(0).toLowerCase() + text.slice(1);

/** What differs between the POSTs with a body to one record's sub-path. */
interface RecordPost {
  operationId: string;
  summary: string;
  description: string;
  resource: ResourceDescriptor;
  /** The body's component name and example. */
  body: string;
  example: JsonObject;
  status: '200' | '201';
  answered: string;
  /** The answer's component name. */
  answer: string;
  conflicts: readonly ErrorCode[];
}

/** An action or a child's create: both POST a body to `<path>/{id}/<name>` as a write. */
function recordPostOperation(post: RecordPost, needs: Needs): JsonSchema {
  return {
    operationId: post.operationId,
    summary: post.summary,
    description: `${post.description}${writes}`,
    tags: [post.resource.text.tag],
    parameters: [idPathParameter(post.resource.label), ...writeParameters],
    requestBody: {
      required: true,
      content: { 'application/json': { schema: schemaRef(post.body), example: post.example } },
    },
    responses: {
      [post.status]: success(post.answered, schemaRef(post.answer), {
        // A 201 made a record: a child's create, whose Location is its GET.
        ...(post.status === '201' ? { Location: headerRef('Location') } : {}),
        'Idempotent-Replayed': headerRef('IdempotentReplayed'),
      }),
      ...errorResponses(recordWriteErrors(post.conflicts), needs),
      ...anyError,
    },
  };
}

/** POST /things/{id}/<action>: answered 200 with the record as GET returns it. */
function actionOperation(
  resource: ResourceDescriptor,
  action: ActionDescriptor,
  needs: Needs,
): JsonSchema {
  const doc = docOf(resource);
  const component =
    action.answer?.component ?? (doc.detail ? `${doc.component}Detail` : doc.component);
  needs.responses.set(component, action.answer?.schema ?? doc.detail ?? doc.response);
  needs.bodies.set(
    action.text.component,
    requestBodySchema({ ...action, notes: action.text.notes }, true, action.text.summary + '.'),
  );
  return recordPostOperation(
    {
      operationId: lowerFirst(`${pascal(action.name)}${doc.component}`),
      summary: action.text.summary,
      description: action.text.description,
      resource,
      body: action.text.component,
      example: action.text.example,
      status: '200',
      answered:
        action.answer?.description ??
        `The ${doc.label} after the change; on a dry run the ${doc.label} as it would be.`,
      answer: component,
      conflicts: action.text.conflicts,
    },
    needs,
  );
}

/** POST /things/{id}/<children>: one new record of the parent. */
function childCreateOperation(
  resource: ResourceDescriptor,
  child: ChildCollectionDescriptor,
  needs: Needs,
): JsonSchema {
  const { component } = child.text;
  needs.responses.set(component, child.response);
  needs.bodies.set(
    `${component}Create`,
    requestBodySchema({ ...child, notes: child.text.notes }, true, `A new ${child.label}.`),
  );
  return recordPostOperation(
    {
      operationId: `create${component}`,
      summary: `Create ${article(child.label)}`,
      description: child.text.rules,
      resource,
      body: `${component}Create`,
      example: child.text.example,
      status: '201',
      answered: `The created ${child.label}; on a dry run the ${child.label} that would be created, with id 0 and no Location.`,
      answer: component,
      conflicts: child.text.conflicts,
    },
    needs,
  );
}

/** GET /things/{id}/<children>/{child_id}: one record of the parent (a create's Location). */
function childRetrieveOperation(
  resource: ResourceDescriptor,
  child: ChildCollectionDescriptor,
  needs: Needs,
): JsonSchema {
  const { component } = child.text;
  needs.responses.set(component, child.response);
  return {
    operationId: `retrieve${component}`,
    summary: `Retrieve ${article(child.label)}`,
    description: `One ${child.label} of one ${resource.label}, as its create answered it (404 when the ${resource.label} is not the caller’s, or the ${child.label} is not that ${resource.label}’s).`,
    tags: [resource.text.tag],
    parameters: [
      idPathParameter(resource.label),
      {
        name: child.param,
        in: 'path',
        required: true,
        description: `The ${child.label}'s id.`,
        schema: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
        example: 1,
      },
    ],
    responses: {
      '200': success(`The ${child.label}.`, schemaRef(component)),
      ...errorResponses(
        ['invalid_parameter', ...authentication, 'resource_not_found', ...ourSide],
        needs,
      ),
      ...anyError,
    },
  };
}

/** What a list mounted under one record of another resource shows in the document. */
interface NestedList {
  component: string;
  response: ChildCollectionDescriptor['response'];
  list: ChildCollectionDescriptor['list'];
  filterNotes: ChildCollectionDescriptor['text']['filterNotes'];
  parentLabel: string;
  tag: string;
  operationId: string;
  summary: string;
  description: string;
}

/** GET /parents/{id}/<name>: a page of the records that belong to (or concern) one record. */
function nestedListOperation(nested: NestedList, needs: Needs): JsonSchema {
  const { component } = nested;
  needs.responses.set(component, nested.response);
  needs.responses.set(`${component}List`, listEnvelope(nested.list.endpoint, nested.response));
  return {
    operationId: nested.operationId,
    summary: nested.summary,
    description: `${nested.description}\n\nCursor pagination: see the introduction. A cursor belongs to its ${nested.parentLabel}.`,
    tags: [nested.tag],
    parameters: [
      idPathParameter(nested.parentLabel),
      ...pageParameters,
      ...filterParameters(nested.list, nested.filterNotes),
    ],
    responses: {
      '200': success('One page of the list.', schemaRef(`${component}List`)),
      ...errorResponses(listErrors({ extra: ['resource_not_found'] }), needs),
      ...anyError,
    },
  };
}

/** GET /things/{id}/<children>: the parent's records, newest first. */
function childListOperation(
  resource: ResourceDescriptor,
  child: ChildCollectionDescriptor,
  needs: Needs,
): JsonSchema {
  return nestedListOperation(
    {
      component: child.text.component,
      response: child.response,
      list: child.list,
      filterNotes: child.text.filterNotes,
      parentLabel: resource.label,
      tag: resource.text.tag,
      operationId: `list${child.text.component}s`,
      summary: `List ${article(resource.label).replace(/^an? /, 'a ')}’s ${child.name}`,
      description: `The ${child.name} of one ${resource.label}, newest first (404 when the ${resource.label} is not the caller’s).`,
    },
    needs,
  );
}

/** GET /others/{id}/<name>: the resource's records that concern one record of another resource. */
function listedUnderOperation(
  resource: ResourceDescriptor,
  listed: RecordListDescriptor,
  needs: Needs,
): JsonSchema {
  return nestedListOperation(
    {
      component: listed.item?.component ?? resource.text.component,
      response: listed.item?.response ?? resource.response,
      list: listed.list,
      filterNotes: listed.text.filterNotes,
      parentLabel: listed.parent.label,
      tag: resource.text.tag,
      operationId: listed.text.operationId,
      summary: listed.text.summary,
      description: listed.text.description,
    },
    needs,
  );
}

/**
 * A computed answer with its query parameters: about one record (GET /things/{id}/<read>, with
 * the record's path id and a 404 for another institution's) or about the institution's records
 * (GET /reports/<name>).
 */
function readOperation(
  read: Pick<RecordReadDescriptor, 'query' | 'response' | 'text'>,
  tag: string,
  record: ResourceDescriptor | null,
  needs: Needs,
): JsonSchema {
  needs.responses.set(read.text.component, read.response);
  const parameters = Object.entries(read.query);
  return {
    operationId: read.text.operationId,
    summary: read.text.summary,
    description: read.text.description,
    tags: [tag],
    parameters: [
      ...(record ? [idPathParameter(record.label)] : []),
      ...parameters.map(([name, parameter]) => ({
        name,
        in: 'query',
        required: parameter.required,
        description: parameter.description,
        schema: parameter.schema,
      })),
    ],
    responses: {
      '200': success(read.text.summary + '.', schemaRef(read.text.component)),
      ...errorResponses(
        [
          'invalid_parameter',
          ...(parameters.some(([, parameter]) => parameter.required)
            ? (['parameter_missing'] as const)
            : []),
          ...authentication,
          ...(record ? (['resource_not_found'] as const) : []),
          ...ourSide,
        ],
        needs,
      ),
      ...anyError,
    },
  };
}

/** GET of a file made of one record (RecordDownloadDescriptor), streamed. */
function downloadOperation(
  download: RecordDownloadDescriptor,
  record: ResourceDescriptor,
  needs: Needs,
): JsonSchema {
  return {
    operationId: download.text.operationId,
    summary: download.text.summary,
    description: download.text.description,
    tags: [record.text.tag],
    parameters: [idPathParameter(record.label)],
    responses: {
      '200': {
        ...success(`${download.text.summary}, streamed as it is made.`, {}),
        content: { [download.contentType]: { schema: { type: 'string', format: 'binary' } } },
      },
      ...errorResponses(
        ['invalid_parameter', ...authentication, 'resource_not_found', ...ourSide],
        needs,
      ),
      ...anyError,
    },
  };
}

/** The OpenAPI operation of one route of the table. */
export function operationFor(route: DocumentedRoute, needs: Needs): JsonSchema {
  switch (route.doc.kind) {
    case 'write':
      return writeOperation(route, route.doc, needs);
    case 'list':
      return listOperation(route, route.doc, needs);
    case 'retrieve':
      return retrieveOperation(route.doc.resource, needs);
    case 'institution':
      return institutionOperation(needs);
    case 'institution-update':
      return institutionUpdateOperation(needs);
    case 'action':
      return actionOperation(route.doc.resource, route.doc.action, needs);
    case 'child-list':
      return childListOperation(route.doc.resource, route.doc.child, needs);
    case 'child-create':
      return childCreateOperation(route.doc.resource, route.doc.child, needs);
    case 'child-retrieve':
      return childRetrieveOperation(route.doc.resource, route.doc.child, needs);
    case 'listed-under':
      return listedUnderOperation(route.doc.resource, route.doc.listed, needs);
    case 'record-download':
      return downloadOperation(route.doc.download, route.doc.resource, needs);
    case 'record-read':
      return readOperation(route.doc.read, route.doc.resource.text.tag, route.doc.resource, needs);
    case 'institution-read':
      return readOperation(route.doc.read, route.doc.read.text.tag, null, needs);
    case 'event-list':
      return eventListOperation(route.doc, needs);
    case 'event-retrieve':
      return eventRetrieveOperation(needs);
    case 'webhook-delivery-list':
      return webhookDeliveryListOperation(route.doc, needs);
    case 'webhook-attempt-list':
      return webhookAttemptListOperation(route.doc, needs);
    case 'nested-action':
      return nestedActionOperation(route.doc.resource, route.doc.action, needs);
    case 'import':
      return importOperation(route.doc.operation, needs);
    case 'api-key':
      return apiKeyOperation(route.doc.operation, needs);
    case 'audit-event-list':
      return auditEventListOperation(needs);
  }
}
