import type { Logger } from 'pino';

/** A long-lived part of a process: started in the order it was added, stopped in the reverse order. */
export interface Service {
  readonly name: string;
  start?(): void | Promise<void>;
  stop?(): void | Promise<void>;
}

/**
 * Owns the long-lived services of one process (the event stream, the credential
 * cache, the sequencer, the schedulers and workers). `buildApp` declares which
 * run for the process's role; the runtime starts them in that order and stops
 * the ones it started in the reverse order, each once, even when a start failed
 * half-way (what started is stopped; the failure is rethrown).
 */
export class Runtime {
  private readonly services: Service[] = [];
  private started: Service[] = [];

  constructor(private readonly log: Logger) {}

  /** Adds a service (skipped when `when` is false: a role that does not run it). */
  add(service: Service, when = true): this {
    if (when) this.services.push(service);
    return this;
  }

  get names(): string[] {
    return this.services.map((s) => s.name);
  }

  async start(): Promise<void> {
    for (const s of this.services) {
      if (this.started.includes(s)) continue;
      try {
        await s.start?.();
      } catch (err) {
        this.log.error({ err, service: s.name }, 'service failed to start');
        await this.stop();
        throw err;
      }
      this.started.push(s);
    }
  }

  async stop(): Promise<void> {
    const started = this.started;
    this.started = [];
    for (const s of started.reverse()) {
      try {
        await s.stop?.();
      } catch (err) {
        this.log.error({ err, service: s.name }, 'service failed to stop');
      }
    }
  }
}
