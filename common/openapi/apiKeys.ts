import { apiKeyCreateShape, apiKeyRollShape } from '../apiKeys/commands.js';
import {
  apiKeyCreatedResponse,
  apiKeyList,
  apiKeyResponse,
  DEFAULT_ROLL_SECONDS,
  MAX_KEY_DAYS,
} from '../apiKeys/schema.js';
import { listEnvelope } from '../resources/responseFields.js';
import type { ErrorCode } from './errorCatalogue.js';
import { schemaRef, type JsonSchema } from './jsonSchema.js';
import {
  anyError,
  authentication,
  bodyWriteErrors,
  errorResponses,
  ourSide,
  success,
  type Needs,
} from './responses.js';
import { headerRef, pageParameters, writeParameters } from './parameters.js';
import { requestBodySchema } from './requestBody.js';
import type { EndpointDoc } from './routeDoc.js';

type ApiKeyOperation = Extract<EndpointDoc, { kind: 'api-key' }>['operation'];

const tags = ['API keys'];

export const apiKeysTagDescription =
  'The institution’s API keys, each with its permissions (see `x-required-permission` on every operation): made, rolled and revoked through the API, every one of these writes its `api_key.*` event. A key grants only what the key making it has. See docs/keys-and-permissions.md.';

const idParameter: JsonSchema = {
  name: 'id',
  in: 'path',
  required: true,
  description:
    'The key’s public id (`key_` and 16 hex digits). A key of another institution is as absent as a missing one (404).',
  schema: { type: 'string', pattern: '^key_[0-9a-f]{16}$', maxLength: 20 },
  example: 'key_3f9c2a1b0d4e5f67',
};

const writes =
  '\n\nSupports a dry run (`dry_run` / `Dry-Run`) and an `Idempotency-Key`: see the introduction.';

const readErrors: ErrorCode[] = [
  'invalid_parameter',
  ...authentication,
  'resource_not_found',
  ...ourSide,
];

const created = (needs: Needs, description: string) => {
  needs.responses.set('ApiKeyCreated', apiKeyCreatedResponse);
  return success(description, schemaRef('ApiKeyCreated'), {
    Location: {
      description: 'The path of the new key (also on a replay; not on a dry run).',
      schema: { type: 'string', pattern: '^/api/v1/api-keys/key_[0-9a-f]{16}$', maxLength: 37 },
    },
    'Idempotent-Replayed': headerRef('IdempotentReplayed'),
  });
};

/** The OpenAPI operation of one /api-keys route. */
export function apiKeyOperation(operation: ApiKeyOperation, needs: Needs): JsonSchema {
  needs.responses.set('ApiKey', apiKeyResponse);
  switch (operation) {
    case 'list':
      needs.responses.set('ApiKeyList', listEnvelope(apiKeyList.endpoint, apiKeyResponse));
      return {
        operationId: 'listApiKeys',
        summary: 'List API keys',
        description:
          'The institution’s keys, newest first, revoked and expired ones included; never a secret. Cursor pagination: see the introduction.',
        tags,
        parameters: [...pageParameters],
        responses: {
          '200': success('One page of the list.', schemaRef('ApiKeyList')),
          ...errorResponses(
            ['invalid_parameter', 'invalid_cursor', ...authentication, ...ourSide],
            needs,
          ),
          ...anyError,
        },
      };
    case 'retrieve':
      return {
        operationId: 'retrieveApiKey',
        summary: 'Retrieve an API key',
        description: 'One key, with its permissions and last use; never its secret.',
        tags,
        parameters: [idParameter],
        responses: {
          '200': success('The key.', schemaRef('ApiKey')),
          ...errorResponses(readErrors, needs),
          ...anyError,
        },
      };
    case 'create':
      needs.bodies.set(
        'ApiKeyCreate',
        requestBodySchema(
          {
            shape: apiKeyCreateShape,
            defaults: { expires_at: null },
            notes: {
              name: 'What the key is for: 1 to 100 characters.',
              permissions:
                'At most what the key making the request has, group by group (422 `not_allowed` otherwise); an unknown group is `unknown_field`, an unknown level `invalid_value`.',
              expires_at: `In the future and at most ${MAX_KEY_DAYS} days ahead (422 \`out_of_range\`). Absent or null: the key does not expire.`,
            },
          },
          true,
          'A new API key.',
        ),
      );
      return {
        operationId: 'createApiKey',
        summary: 'Create an API key',
        description: `Makes a key of the institution and answers it with its secret \`key\`, shown this once (a replay under the same \`Idempotency-Key\` answers it again). A dry run answers a placeholder id and key, and makes nothing.${writes}`,
        tags,
        parameters: [...writeParameters],
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: schemaRef('ApiKeyCreate'),
              example: { name: 'Data warehouse', permissions: { '*': 'read' } },
            },
          },
        },
        responses: {
          '201': created(needs, 'The key, with its secret.'),
          ...errorResponses(bodyWriteErrors(), needs),
          ...anyError,
        },
      };
    case 'roll':
      needs.bodies.set(
        'ApiKeyRoll',
        requestBodySchema(
          {
            shape: apiKeyRollShape,
            defaults: { expires_in_seconds: DEFAULT_ROLL_SECONDS },
            notes: {
              expires_in_seconds:
                'How long the old key keeps working: 0 to 604800 seconds (7 days). A key rolling itself keeps at least 1 (422 `not_allowed`).',
            },
          },
          true,
          'How long the old key keeps working.',
        ),
      );
      return {
        operationId: 'rollApiKey',
        summary: 'Roll an API key',
        description: `Makes a new key of the same name and permissions (\`rolled_from_id\` names the old one) and answers it with its secret, shown this once; the old key expires after \`expires_in_seconds\` (sooner if it was to expire sooner). A revoked or expired key cannot be rolled (409 \`invalid_state_transition\`); a key can roll only a key whose permissions it has (422 \`not_allowed\` on \`id\`).${writes}`,
        tags,
        parameters: [idParameter, ...writeParameters],
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: schemaRef('ApiKeyRoll'),
              example: { expires_in_seconds: 3600 },
            },
          },
        },
        responses: {
          '201': created(needs, 'The new key, with its secret.'),
          ...errorResponses(
            bodyWriteErrors({ extra: ['resource_not_found', 'invalid_state_transition'] }),
            needs,
          ),
          ...anyError,
        },
      };
    case 'revoke':
      return {
        operationId: 'revokeApiKey',
        summary: 'Revoke an API key',
        description: `Revokes the key at once: from then on it gets 401 \`invalid_api_key\`, and a write of it still queued commits nothing. Revoking a revoked key keeps its first \`revoked_at\`. A key cannot revoke itself (422 \`not_allowed\` on \`id\`).${writes}`,
        tags,
        parameters: [idParameter, ...writeParameters],
        responses: {
          '200': success('The key, revoked (on a dry run: as it would be).', schemaRef('ApiKey'), {
            'Idempotent-Replayed': headerRef('IdempotentReplayed'),
          }),
          ...errorResponses(
            [
              'invalid_parameter',
              'invalid_idempotency_key',
              ...authentication,
              'resource_not_found',
              'idempotency_key_in_flight',
              'validation_failed',
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
}
