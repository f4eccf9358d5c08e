import ajv2020 from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';
import type { ValidateFunction } from 'ajv';
import { routeTable } from '../../api/routes.js';
import { buildOpenApiDocument, type OpenApiDocument } from '../../common/openapi/document.js';

/**
 * The contract check: every response a test receives through the harness must be one the OpenAPI
 * document describes, so the document cannot lie. The operation is found by method and path
 * template, the response by status code (an operation must list the status itself: its `default`
 * is only for requests that match no operation), and the JSON body is validated against the
 * response's schema with a JSON Schema 2020-12 validator. Non-JSON bodies (metrics) are skipped.
 */

// ajv and ajv-formats are CommonJS modules whose module.exports is also their `default`.
const Ajv2020 = ajv2020.default;
const addFormats = ajvFormats.default;

const DOCUMENT_ID = 'https://contract.test/openapi.json';

type Json = { [key: string]: unknown };

interface Observed {
  method: string;
  /** As requested, possibly with a query string. */
  path: string;
  status: number;
  headers: Headers;
  /** Parsed JSON, or null for an empty body. */
  body: unknown;
}

interface Operation {
  template: string;
  method: string;
  operation: Json;
}

const escapePointer = (part: string) => part.replace(/~/g, '~0').replace(/\//g, '~1');
const pointer = (...parts: string[]) => `#/${parts.map(escapePointer).join('/')}`;

function at(document: Json, ref: string): Json {
  let node: unknown = document;
  for (const part of ref.replace(/^#\//, '').split('/')) {
    const key = part.replace(/~1/g, '/').replace(/~0/g, '~');
    node = (node as Json | undefined)?.[key];
  }
  if (!node || typeof node !== 'object') throw new Error(`the document has nothing at ${ref}`);
  return node as Json;
}

/** Express matches paths case-insensitively, with or without a trailing slash. */
function templateRegExp(template: string): RegExp {
  const pattern = template
    .split(/(\{\w+\})/)
    .map((part) => (/^\{\w+\}$/.test(part) ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${pattern}/?$`, 'i');
}

const decodable = (segment: string) => {
  try {
    decodeURIComponent(segment);
    return true;
  } catch {
    return false;
  }
};

/** Errors any request may get whatever it asked for, when it matches no operation. */
const unmatchedCodes: Record<number, readonly string[]> = {
  401: ['missing_api_key', 'invalid_api_key'],
  404: ['route_not_found'],
  405: ['method_not_allowed'],
  500: ['internal_error'],
  503: ['service_unavailable'],
};

export class Contract {
  private readonly ajv;
  private readonly templates: { template: string; pattern: RegExp; literal: boolean }[];
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(readonly document: OpenApiDocument) {
    this.ajv = new Ajv2020({ allErrors: true, strict: true, strictTypes: false });
    addFormats(this.ajv);
    // The document's own keywords, so that the schemas can be reached inside it by JSON pointer.
    const keywords = ['openapi', 'info', 'servers', 'security', 'tags', 'paths', 'webhooks'];
    for (const keyword of [...keywords, 'components']) this.ajv.addKeyword(keyword);
    this.ajv.addSchema({ ...document, $id: DOCUMENT_ID });
    // Literal paths before templated ones, as the routes are registered.
    this.templates = Object.keys(document.paths)
      .map((template) => ({
        template,
        pattern: templateRegExp(template),
        literal: !template.includes('{'),
      }))
      .sort((a, b) => Number(b.literal) - Number(a.literal));
  }

  private find(method: string, path: string): Operation | 'no path' | 'no method' {
    // Express cannot decode such a path's parameters: it names nothing (404 route_not_found).
    if (!path.split('/').every(decodable)) return 'no path';
    const matching = this.templates.filter(({ pattern }) => pattern.test(path));
    if (!matching.length) return 'no path';
    // HEAD is GET without the body (Express answers it with the GET route).
    const documented = method.toUpperCase() === 'HEAD' ? 'get' : method.toLowerCase();
    // The first matching path answers, with 405 if it lacks the method (api/app.ts registers each
    // path's 405 right after its handlers), so a later template is never tried.
    const template = matching[0]!.template;
    const operation = this.document.paths[template]?.[documented] as Json | undefined;
    return operation ? { template, method: documented.toUpperCase(), operation } : 'no method';
  }

  private validator(ref: string): ValidateFunction {
    let validate = this.validators.get(ref);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `${DOCUMENT_ID}${ref}` });
      this.validators.set(ref, validate);
    }
    return validate;
  }

  /** The response's schema pointer and headers, following a `$ref` to components.responses. */
  private response(responseRef: string): { ref: string; response: Json } {
    let ref = responseRef;
    let response = at(this.document, ref);
    if (typeof response.$ref === 'string') {
      ref = response.$ref;
      response = at(this.document, ref);
    }
    return { ref, response };
  }

  /** Problems of one response, or null when it is as the document says. */
  check(observed: Observed): string | null {
    const path = observed.path.split('?')[0]!;
    const found = this.find(observed.method, path);
    const what = `${observed.method} ${observed.path} answered ${observed.status}`;
    let responseRef: string;
    let name: string;
    if (typeof found === 'string') {
      // A request no operation describes: the generic error response (404 route_not_found, 405).
      responseRef = pointer('components', 'responses', 'Error');
      name = `no operation (${found})`;
      const code = (observed.body as { error?: { code?: unknown } } | null)?.error?.code;
      const allowed = unmatchedCodes[observed.status];
      if (!allowed) return `${what}, but the document has ${name} for it`;
      if (!allowed.includes(String(code)))
        return `${what} with code ${String(code)}; a request that matches ${name} may only get ${allowed.join(', ')}`;
    } else {
      name = `${found.operation.operationId as string} (${found.method} ${found.template})`;
      const responses = found.operation.responses as Json;
      if (!responses[String(observed.status)])
        return `${what}, a status ${name} does not document (it lists ${Object.keys(responses).join(', ')})`;
      responseRef = pointer(
        'paths',
        found.template,
        found.method.toLowerCase(),
        'responses',
        String(observed.status),
      );
    }

    const { ref, response } = this.response(responseRef);
    const problems: string[] = [];
    const headers = (response.headers ?? {}) as Json;
    for (const [header, definition] of Object.entries(headers)) {
      const value = observed.headers.get(header);
      const schemaRef = (definition as Json).$ref
        ? `${(definition as Json).$ref as string}/schema`
        : `${ref}/headers/${escapePointer(header)}/schema`;
      if (value === null) {
        if (header === 'Request-Id') problems.push('the Request-Id header is missing');
        continue;
      }
      const validate = this.validator(schemaRef);
      if (!validate(value))
        problems.push(
          `header ${header}: ${this.ajv.errorsText(validate.errors, { dataVar: header })}`,
        );
    }

    const content = (response.content ?? {}) as Json;
    const mediaType = (observed.headers.get('Content-Type') ?? '').split(';')[0]!.trim();
    if (observed.method.toUpperCase() === 'HEAD' && observed.body === null) {
      // No body to judge.
    } else if (!Object.hasOwn(content, mediaType)) {
      problems.push(
        `Content-Type ${mediaType || '(none)'} is not one of ${Object.keys(content).join(', ') || '(no content)'}`,
      );
    } else if (/^application\/([\w.+-]+\+)?json$/.test(mediaType)) {
      const validate = this.validator(`${ref}/content/${escapePointer(mediaType)}/schema`);
      if (!validate(observed.body))
        problems.push(
          `body: ${this.ajv.errorsText(validate.errors, { dataVar: 'body', separator: '; ' })}`,
        );
    }
    if (!problems.length) return null;
    return `${what}, which does not match ${name} in the OpenAPI document:\n- ${problems.join('\n- ')}\nBody: ${JSON.stringify(observed.body)?.slice(0, 2000)}`;
  }
}

let shared: Contract | undefined;

/** The document of the route table, compiled once per test file. */
export function contract(): Contract {
  shared ??= new Contract(buildOpenApiDocument(routeTable()));
  return shared;
}

/** Throws when a response is not as the OpenAPI document says. */
export function expectDocumented(observed: Observed): void {
  const problem = contract().check(observed);
  if (problem) throw new Error(`Contract check: ${problem}`);
}
