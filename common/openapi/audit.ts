import { auditEventList, auditEventResponse } from '../audit/list.js';
import { listEnvelope } from '../resources/responseFields.js';
import { schemaRef, type JsonSchema } from './jsonSchema.js';
import {
  anyError,
  authentication,
  errorResponses,
  ourSide,
  success,
  type Needs,
} from './responses.js';
import { filterParameters, pageParameters } from './parameters.js';

export const auditTagDescription =
  'Who did what: one row per write (committed, refused, dry run or replayed), per 401 or 403, per key action, and per read of one donor or student or an export, each with the route’s template and never a value of the path, query or body. Kept `AUDIT_RETENTION_DAYS` (default 400). See docs/keys-and-permissions.md.';

/** GET /audit-events (trust.md §3). */
export function auditEventListOperation(needs: Needs): JsonSchema {
  needs.responses.set('AuditEvent', auditEventResponse);
  needs.responses.set('AuditEventList', listEnvelope(auditEventList.endpoint, auditEventResponse));
  return {
    operationId: 'listAuditEvents',
    summary: 'List audit events',
    description:
      'The institution’s audit rows, newest first; a request’s row is listed within seconds of its answer. Cursor pagination: see the introduction.',
    tags: ['Audit'],
    parameters: [
      ...pageParameters,
      ...filterParameters(auditEventList, {
        api_key_id: 'Rows of this key.',
        object_type: 'Rows about records of this `object` (`donor`).',
        object_id:
          'Rows about this record: with `object_type` (without it, 400 `parameter_missing`).',
        occurred_from: 'Rows at or after this instant.',
        occurred_to: 'Rows at or before this instant.',
        status: 'Rows answered with this HTTP status.',
      }),
    ],
    responses: {
      '200': success('One page of the list.', schemaRef('AuditEventList')),
      ...errorResponses(
        ['invalid_parameter', 'parameter_missing', 'invalid_cursor', ...authentication, ...ourSide],
        needs,
      ),
      ...anyError,
    },
  };
}
