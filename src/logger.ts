import pino, { type Logger } from 'pino';

/**
 * Structured JSON logs. Redaction is a second line of defence: the code never
 * logs headers or bodies, but any field named like a credential is censored.
 */
export function createLogger(level: string): Logger {
  return pino({
    level,
    base: undefined,
    redact: {
      paths: ['*.authorization', '*.secret', '*.token', '*.user_token', '*.operator_token', 'secret', 'token', 'authorization'],
      censor: '[redacted]',
    },
  });
}
