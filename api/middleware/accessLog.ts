import type { RequestHandler } from 'express';
import type { Logger } from '../../common/logger.js';

/**
 * One log line per request when its response ends: `error` for a 5xx or a response cut short,
 * `info` otherwise. A request whose line's level is off costs one level check and nothing else
 * (pino-http built a child logger and a serializer pass for every request whatever the level,
 * about a tenth of the API's CPU per write at LOG_LEVEL=warn).
 */
export function accessLog(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const errorsOnly = !logger.isLevelEnabled('info');
    if (errorsOnly && !logger.isLevelEnabled('error')) return next();
    const started = performance.now();
    const done = () => {
      res.off('finish', done);
      res.off('close', done);
      const failed = !res.writableFinished || res.statusCode >= 500;
      if (!failed && errorsOnly) return;
      const line = {
        requestId: res.locals.requestId as string | undefined,
        req: { method: req.method, url: req.originalUrl },
        res: { statusCode: res.statusCode },
        responseTime: Math.round(performance.now() - started),
      };
      if (failed) logger.error(line, res.writableFinished ? 'request errored' : 'request aborted');
      else logger.info(line, 'request completed');
    };
    res.on('finish', done);
    res.on('close', done);
    next();
  };
}
