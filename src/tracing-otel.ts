import { readFileSync } from 'node:fs';
import { context, propagation, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import type { Logger } from 'pino';
import type { SpanAttributes, SpanHandle, SpanOptions, Tracing } from './tracing-types.ts';

/**
 * The OpenTelemetry side of src/tracing.ts, imported only when an OTLP
 * endpoint is configured: a Node tracer provider (AsyncLocalStorage context,
 * W3C trace context propagation) whose batch processor posts spans as
 * OTLP/HTTP JSON to `endpoint`. Service name: OTEL_SERVICE_NAME, else
 * `platform-api`.
 */
const KINDS = { internal: SpanKind.INTERNAL, server: SpanKind.SERVER, client: SpanKind.CLIENT } as const;
const version = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

const clean = (attributes: SpanAttributes) =>
  Object.fromEntries(Object.entries(attributes).filter(([, v]) => v !== undefined)) as Record<string, string | number | boolean>;

function handle(span: Span): SpanHandle {
  return {
    setAttributes: (a) => void span.setAttributes(clean(a)),
    updateName: (n) => void span.updateName(n),
    fail: (message) => void span.setStatus({ code: SpanStatusCode.ERROR, message }),
  };
}

export function otelTracing(endpoint: string, log: Logger): Tracing {
  const exporter = new OTLPTraceExporter({ url: endpoint });
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': process.env.OTEL_SERVICE_NAME || 'platform-api', 'service.version': version }),
    spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: 1000 })],
  });
  provider.register(); // the global tracer provider, AsyncLocalStorage context manager and W3C propagator
  const tracer = trace.getTracer('platform-api', version);

  return {
    enabled: true,
    span(name, attributes, fn, options: SpanOptions = {}) {
      const parent = options.carrier ? propagation.extract(context.active(), options.carrier) : context.active();
      const span = tracer.startSpan(name, { kind: KINDS[options.kind ?? 'internal'], attributes: clean(attributes) }, parent);
      const failed = (err: unknown) => {
        span.recordException(err as Error);
        span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error)?.message });
        span.end();
        throw err;
      };
      let out: ReturnType<typeof fn>;
      try {
        out = context.with(trace.setSpan(parent, span), () => fn(handle(span)));
      } catch (err) {
        return failed(err);
      }
      const pending = out as unknown as PromiseLike<unknown> | undefined;
      if (pending && typeof pending.then === 'function') {
        return pending.then((v) => {
          span.end();
          return v;
        }, failed) as unknown as typeof out;
      }
      span.end();
      return out;
    },
    // A collector that is down loses those spans, never the caller's work (a shutdown still exits 0).
    // The ended spans still buffered, then every export in flight (a timed batch may have left just before).
    flush: () =>
      provider
        .forceFlush()
        .then(() => exporter.forceFlush())
        .catch((err: Error) => log.warn({ err: { message: err.message } }, 'could not export traces')),
  };
}
