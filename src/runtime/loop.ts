/**
 * The one background-loop primitive: `kick()` runs a pass now, or once more
 * right after the running one (kicks during a pass coalesce into one more
 * pass); a pass that returns `true` left work behind and runs again at once;
 * an optional poll is the backstop for wake-ups that never came (another
 * process crashed, a NOTIFY was missed). A pass that throws ends the run and
 * is reported; the next kick or poll starts afresh. `stop()` waits for the
 * running pass; kicks after it are ignored.
 */
export class Loop {
  private running = false;
  private again = false;
  private stopped = false;
  private idle: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private wake: NodeJS.Timeout | undefined;
  private wakeAtMs = Number.POSITIVE_INFINITY;

  constructor(
    private readonly pass: () => Promise<boolean | void>,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** Polls every `pollMs`: `poll` (default: a kick) decides whether there is anything to do. */
  start(pollMs: number, poll: () => void = () => this.kick()): void {
    this.stopped = false;
    clearInterval(this.timer);
    this.timer = setInterval(poll, pollMs);
    this.timer.unref();
  }

  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    this.idle = this.run();
  }

  /** Runs a pass in `ms` (a wake-up at a known instant; the earliest of several requests wins). */
  wakeIn(ms: number): void {
    if (this.stopped) return;
    const delay = Math.max(0, ms);
    const at = Date.now() + delay;
    if (this.wake && at >= this.wakeAtMs) return;
    clearTimeout(this.wake);
    this.wakeAtMs = at;
    this.wake = setTimeout(() => {
      this.wake = undefined;
      this.wakeAtMs = Number.POSITIVE_INFINITY;
      this.kick();
    }, delay);
    this.wake.unref();
  }

  /** A pass is running (or about to run again). */
  get busy(): boolean {
    return this.running;
  }

  /** Resolves when the current run (if any) has ended. */
  settled(): Promise<void> {
    return this.idle;
  }

  /** Kicks, then resolves once no pass is running: everything due before the call has been handled. */
  async flush(): Promise<void> {
    this.kick();
    while (this.running) await this.idle;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    clearTimeout(this.wake);
    this.wake = undefined;
    await this.idle;
  }

  private async run(): Promise<void> {
    try {
      do {
        this.again = false;
        if ((await this.pass()) === true) this.again = true;
      } while (this.again && !this.stopped);
    } catch (err) {
      this.onError(err);
    } finally {
      this.running = false;
    }
  }
}

/**
 * A wake-up port for a loop built after its callers: the services wake each other in a circle (a commit wakes the
 * sequencer, a sequenced batch wakes delivery, a delivery commits), so one of them is given a port at construction
 * and the loop behind it is attached once, where the services are built (src/runtime/services.ts). A kick before the
 * attachment, or with none (a role that does not run that loop), does nothing.
 */
export class Wake {
  private target: (() => void) | undefined;

  kick(): void {
    this.target?.();
  }

  attach(target: () => void): void {
    if (this.target) throw new Error('wake-up port attached twice');
    this.target = target;
  }
}
