import pino, { type DestinationStream, type Logger } from 'pino';

/**
 * Structured JSON logs. Redaction is a second line of defence: the code never
 * logs headers or bodies, but any field named like a credential is censored.
 * `destination` defaults to stdout (tests pass one they read).
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: undefined,
      redact: {
        paths: ['*.authorization', '*.secret', '*.token', '*.user_token', '*.operator_token', 'secret', 'token', 'authorization'],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
