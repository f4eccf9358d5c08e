import type { RequestHandler } from 'express';
import type { Logger } from '../../common/logger.js';

/**
 * One log line per request when its response is done (or its connection closed first): method,
 * the route's template and the names of its query parameters (never the path's or the query's
 * values, which can be an email searched for or a cursor: trust.md §4), status, milliseconds and
 * Request-Id; `info`, or `error` for a 5xx. Nothing is built when
 * the level is off. Written here rather
 * than with pino-http, which builds a child logger for every request even when its line is not
 * written: on a list that was a measurable share of the request's CPU.
 */
export function requestLog(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const started = performance.now();
    res.once('close', () => {
      const level = res.statusCode >= 500 ? 'error' : 'info';
      if (!logger.isLevelEnabled(level)) return;
      const message = !res.writableFinished
        ? 'request aborted'
        : level === 'error'
          ? 'request errored'
          : 'request completed';
      logger[level](
        {
          reqId: res.locals.requestId,
          req: {
            method: req.method,
            route: res.locals.route ?? 'unmatched',
            // A name is the client's text too: one that is not shaped like a parameter is not kept.
            params: Object.keys(req.query).map((name) =>
              /^[a-z][a-z_]{0,39}$/.test(name) ? name : '[other]',
            ),
          },
          res: { statusCode: res.statusCode },
          responseTime: Math.round(performance.now() - started),
        },
        message,
      );
    });
    next();
  };
}
