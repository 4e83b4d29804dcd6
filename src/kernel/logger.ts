import { pino, type Logger } from 'pino';
import type { LogLevel } from '../config.js';

/** Structured JSON logs on stdout; key material is redacted wherever it could appear. */
export function createLogger(level: LogLevel): Logger {
  return pino({
    level,
    redact: {
      paths: [
        'req.headers.authorization',
        'headers.authorization',
        '*.api_key',
        '*.token',
        'api_key',
        'token',
        'personal_api_key',
        'value',
      ],
      censor: '[redacted]',
    },
  });
}

export type { Logger };
