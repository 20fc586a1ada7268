/** The tracing interface (src/tracing.ts), apart so that the OpenTelemetry side implements it without importing its loader. */
export type SpanAttributes = Record<string, string | number | boolean | undefined>;

export interface SpanHandle {
  setAttributes(attributes: SpanAttributes): void;
  updateName(name: string): void;
  /** Marks the span failed (without ending it); `span` does this itself for a thrown error. */
  fail(message?: string): void;
}

export interface SpanOptions {
  kind?: 'internal' | 'server' | 'client';
  /** Incoming request headers whose W3C `traceparent` (and `tracestate`) become the span's parent. */
  carrier?: Record<string, string | string[] | undefined>;
}

export interface Tracing {
  readonly enabled: boolean;
  /** Runs `fn` in a new span, a child of the active one (or of `carrier`'s context); it ends when `fn` settles. */
  span<T>(name: string, attributes: SpanAttributes, fn: (span: SpanHandle) => T, options?: SpanOptions): T;
  /** Sends the spans that ended so far. */
  flush(): Promise<void>;
}
