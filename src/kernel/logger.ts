import { pino, type Logger } from 'pino';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

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
