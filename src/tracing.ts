import type { Logger } from 'pino';
import type { SpanHandle, Tracing } from './tracing-types.ts';

/**
 * Optional OpenTelemetry traces (docs/operating/observability.md). The code
 * that records spans calls `tracing`: with no OTLP endpoint configured it is
 * `noTracing`, whose `span` only calls its function, and no OpenTelemetry
 * module is ever loaded. `startTracing` (from buildApp, when
 * `config.tracesEndpoint` is set) imports src/tracing-otel.ts, which sets up
 * the SDK and replaces `tracing`. Like OpenTelemetry's own tracer provider it
 * is one per process.
 *
 * Span names are low-cardinality: a route template, a GraphQL operation type
 * and name, a statement name, an operation kind; never an id. Ids and codes
 * go in attributes.
 */
export type { SpanAttributes, SpanHandle, SpanOptions, Tracing } from './tracing-types.ts';

const NOOP_SPAN: SpanHandle = { setAttributes() {}, updateName() {}, fail() {} };

export const noTracing: Tracing = {
  enabled: false,
  span: (_name, _attributes, fn) => fn(NOOP_SPAN),
  flush: async () => {},
};

/** The process's tracing: `noTracing` until `startTracing` succeeds. */
export let tracing: Tracing = noTracing;

/** Turns tracing on for this process (once; later calls keep the first endpoint). */
export async function startTracing(endpoint: string, log: Logger): Promise<Tracing> {
  if (tracing.enabled) return tracing;
  const { otelTracing } = await import('./tracing-otel.ts');
  tracing = otelTracing(endpoint, log);
  log.info({ endpoint }, 'OpenTelemetry traces exported over OTLP/HTTP');
  return tracing;
}
