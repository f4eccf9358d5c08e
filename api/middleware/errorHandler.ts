import type { ErrorRequestHandler, Response } from 'express';
import type { Logger } from '../../common/logger.js';
import { ApiError, errors, shouldRetryOf } from '../../common/errors.js';
import { isUnavailableError } from '../../common/db/unavailable.js';

function sendError(res: Response, error: ApiError): void {
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  const shouldRetry = shouldRetryOf(error);
  if (shouldRetry) res.setHeader('Should-Retry', shouldRetry);
  res
    .status(error.status)
    .json({ error: { ...error.body, request_id: String(res.locals.requestId) } });
}

/** Body-parser failures carry a `type`; map them to the documented codes. */
function fromBodyParser(error: unknown): ApiError | null {
  const type = (error as { type?: unknown } | null)?.type;
  if (type === 'entity.parse.failed')
    return errors.invalidJson('The request body is not valid JSON.');
  if (type === 'entity.too.large') return errors.payloadTooLarge();
  if (type === 'encoding.unsupported' || type === 'charset.unsupported')
    return errors.unsupportedMediaType();
  if (type === 'request.aborted' || type === 'request.size.invalid')
    return errors.invalidJson('The request body was incomplete.');
  // zlib's own error (an errno and a code such as Z_DATA_ERROR), passed on with status 400: a
  // body that does not decode as its Content-Encoding says.
  const { status, errno } = (error ?? {}) as { status?: unknown; errno?: unknown };
  if (status === 400 && typeof errno === 'number')
    return errors.invalidJson('The request body does not decode as its Content-Encoding says.');
  return null;
}

/**
 * The router could not percent-decode a path parameter (`/donors/%E0%A4%A`): such a path names
 * nothing, like any other unknown path, so 404 rather than a 500.
 */
function fromRouter(error: unknown, method: string, path: string): ApiError | null {
  return error instanceof URIError ? errors.routeNotFound(method, path) : null;
}

/** The last middleware: every failure leaves in the documented envelope, never with a stack trace. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (error: unknown, req, res, _next) => {
    const apiError =
      error instanceof ApiError
        ? error
        : (fromBodyParser(error) ??
          fromRouter(error, req.method, req.path) ??
          (isUnavailableError(error) ? errors.serviceUnavailable() : null));
    if (apiError) {
      if (apiError.status >= 500)
        logger.warn({ err: error, requestId: res.locals.requestId }, apiError.body.message);
      sendError(res, apiError);
      return;
    }
    logger.error(
      {
        err: error,
        requestId: res.locals.requestId,
        method: req.method,
        route: res.locals.route ?? 'unmatched',
      },
      'unhandled error',
    );
    if (res.headersSent) return;
    sendError(res, errors.internal());
  };
}
