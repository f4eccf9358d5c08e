import type { RequestHandler } from 'express';
import type { Logger } from '../../common/logger.js';

/**
 * One log line per request when its response is done (or its connection closed first): method,
 * URL, status, milliseconds and Request-Id; `info`, or `error` for a 5xx. Nothing is built when
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
          req: { method: req.method, url: req.originalUrl },
          res: { statusCode: res.statusCode },
          responseTime: Math.round(performance.now() - started),
        },
        message,
      );
    });
    next();
  };
}
