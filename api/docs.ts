/**
 * GET /docs: the interactive API reference, rendered in the browser by Scalar's standalone bundle
 * from GET /api/v1/openapi.json. Everything the page loads comes from this server (the bundle is
 * served from node_modules): no CDN, no web fonts, no telemetry, no AI agent.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { Router, type RequestHandler, type Response } from 'express';
import { errors } from '../common/errors.js';

const DOCS_PATH = '/docs';
const OPENAPI_PATH = '/api/v1/openapi.json';

const require = createRequire(import.meta.url);
/** `@scalar/api-reference` exports only its module entry (dist/index.js); the bundle is beside it. */
const scalarDist = path.dirname(require.resolve('@scalar/api-reference'));
const scalarBundle = path.join(scalarDist, 'browser', 'standalone.js');
const scalarVersion = (
  JSON.parse(readFileSync(path.join(scalarDist, '..', 'package.json'), 'utf8')) as {
    version: string;
  }
).version;

/** Versioned, so a browser may keep it for good; a new renderer version gets a new address. */
const bundlePath = `${DOCS_PATH}/assets/scalar-api-reference-${scalarVersion}.js`;
const initPath = `${DOCS_PATH}/assets/init.js`;

/** Scalar's configuration: https://scalar.com, "Configuration" (the standalone build's options). */
const scalarConfiguration = {
  url: OPENAPI_PATH,
  metaData: { title: 'Donor and Gift Management API reference' },
  // Every tag open, so that every operation is listed in the sidebar at once (about 45).
  defaultOpenAllTags: true,
  // Nothing from outside this server: no font CDN, no telemetry, no hosted agent or MCP helpers.
  withDefaultFonts: false,
  telemetry: false,
  agent: { disabled: true },
  mcp: { disabled: true },
  showDeveloperTools: 'never',
  persistAuth: false,
};

const page = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Donor and Gift Management API reference</title>
    <link rel="icon" href="data:," />
    <style>
      body { margin: 0; font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
      :root { --scalar-font: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
    </style>
  </head>
  <body>
    <div id="api-reference"><noscript>The API reference needs JavaScript. The OpenAPI document is at <a href="${OPENAPI_PATH}">${OPENAPI_PATH}</a>.</noscript></div>
    <script src="${bundlePath}"></script>
    <script src="${initPath}"></script>
  </body>
</html>
`;

const init = `Scalar.createApiReference('#api-reference', ${JSON.stringify(scalarConfiguration)});\n`;

/**
 * The page loads scripts and data only from this server. Scalar injects its own styles (and
 * styles inline), and shows images and fonts as data: URLs; "Test request" calls go to this
 * server, which is the document's server.
 */
const contentSecurityPolicy = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
  "form-action 'self'",
].join('; ');

const label =
  (route: string): RequestHandler =>
  (_req, res, next) => {
    res.locals.route = route;
    next();
  };

/** The 4 MB bundle goes out gzipped (about 1 MB) to browsers that take it; compressed once. */
let compressedBundle: Promise<Buffer> | null = null;
const gzipped = promisify(gzip);
function bundleGzip(): Promise<Buffer> {
  compressedBundle ??= gzipped(readFileSync(scalarBundle)).catch((error: unknown) => {
    compressedBundle = null;
    throw error;
  });
  return compressedBundle;
}

function sendJavaScript(res: Response, body: string | Buffer, cacheControl: string): void {
  res.set({
    'Content-Type': 'text/javascript; charset=utf-8',
    'Cache-Control': cacheControl,
    'X-Content-Type-Options': 'nosniff',
  });
  res.send(body);
}

/** 405 for any method but GET (and HEAD, which Express answers as GET). */
export const onlyGet: RequestHandler = (req) => {
  throw errors.methodNotAllowed(req.method, ['GET']);
};

/** Routes of the docs page; mounted outside /api/v1, with no API key. */
export function docsRouter(): Router {
  const router = Router();

  router.get(DOCS_PATH, label(DOCS_PATH), (_req, res) => {
    res.set({
      'Content-Security-Policy': contentSecurityPolicy,
      'Cache-Control': 'no-cache',
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
    });
    res.type('html').send(page);
  });

  router.get(initPath, label(initPath), (_req, res) => {
    sendJavaScript(res, init, 'no-cache');
  });

  router.get(bundlePath, label(`${DOCS_PATH}/assets/scalar-api-reference.js`), async (req, res) => {
    const immutable = 'public, max-age=31536000, immutable';
    res.vary('Accept-Encoding');
    if (req.acceptsEncodings('gzip', 'identity') === 'gzip') {
      const body = await bundleGzip();
      res.set('Content-Encoding', 'gzip');
      sendJavaScript(res, body, immutable);
      return;
    }
    res.sendFile(scalarBundle, {
      headers: { 'Cache-Control': immutable, 'X-Content-Type-Options': 'nosniff' },
      cacheControl: false,
    });
  });

  for (const path of [DOCS_PATH, initPath, bundlePath]) router.all(path, onlyGet);

  return router;
}
