// The document's OpenAPI 3.1 `webhooks` section: one entry per event type, each the event
// envelope with an example that the envelope's schema accepts.
import ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { routeTable } from '../api/routes.js';
import { eventTypes } from '../common/events/types.js';
import { buildOpenApiDocument } from '../common/openapi/document.js';

interface WebhookEntry {
  post: {
    parameters: { name: string }[];
    requestBody: {
      content: {
        'application/json': {
          schema: unknown;
          example: { type: string; data: { object: { object: string } } };
        };
      };
    };
  };
}
const document = buildOpenApiDocument(routeTable());
const webhooks = document.webhooks as Record<string, WebhookEntry>;

test('one webhook per event type (a type two writes make once), in the order of the event types list', () => {
  expect(Object.keys(webhooks)).toEqual([...new Set(eventTypes.map(({ type }) => type))]);
});

test('each webhook carries the Event envelope and an example of its own type that the schema accepts', () => {
  const ajv = new ajv2020.default({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema({ ...document, $id: 'doc' });
  const validate = ajv.compile({ $ref: 'doc#/components/schemas/Event' });
  for (const [type, entry] of Object.entries(webhooks)) {
    const content = entry.post.requestBody.content['application/json'];
    expect(content.schema).toEqual({ $ref: '#/components/schemas/Event' });
    expect(content.example.type).toBe(type);
    expect(content.example.data.object.object).toBe(type.split('.')[0]);
    const valid = validate(content.example);
    expect({ type, errors: valid ? null : validate.errors }).toEqual({ type, errors: null });
    const headers = entry.post.parameters.map((header) => header.name);
    expect(headers).toEqual(['webhook-id', 'webhook-timestamp', 'webhook-signature']);
  }
});
