import { describe, expect, it } from 'vitest';
import { type Connection, ConnectionPool } from '../../src/domain/destination/transports/connection-pool.ts';

/**
 * The pool's own liveness rules, on stand-in connections (the brokers' behaviour is proven against real brokers in
 * transports.test.ts, transport-restart.test.ts and outage.test.ts): a connection that answers nothing by an attempt's
 * deadline is dropped and the next attempt opens another; an open that never settles is abandoned, and the
 * connection it yields late is closed.
 */
class Stub implements Connection {
  closed = false;
  constructor(readonly n: number) {}
  isOpen = () => !this.closed;
  close = async () => void (this.closed = true);
}

const never = new Promise<never>(() => {});

describe('ConnectionPool', () => {
  it('drops a connection that answered nothing by the deadline; the next use opens a new one', async () => {
    const pool = new ConnectionPool<Stub>(60_000);
    let opened = 0;
    const open = async () => new Stub(++opened);
    const first = await pool.with('k', Date.now() + 1000, open, async (c) => c);
    expect(first.n).toBe(1);
    // Reused while it answers.
    expect((await pool.with('k', Date.now() + 1000, open, async (c) => c)).n).toBe(1);
    // Wedged: this use never answers; its deadline passes.
    void pool.with('k', Date.now() + 50, open, () => never);
    await expect.poll(() => first.closed).toBe(true);
    expect((await pool.with('k', Date.now() + 1000, open, async (c) => c)).n).toBe(2);
    await pool.closeAll();
  });

  it('abandons an open that never settles, and closes what it yields late', async () => {
    const pool = new ConnectionPool<Stub>(60_000, 100);
    let yieldLate: (c: Stub) => void = () => {};
    const late = new Stub(1);
    const hanging = () => new Promise<Stub>((resolve) => (yieldLate = resolve));
    await expect(pool.with('k', Date.now() + 5000, hanging, async (c) => c)).rejects.toThrow(/no connection within 100 ms/);
    yieldLate(late);
    await expect.poll(() => late.closed).toBe(true);
    // After the backoff, the next open is tried again.
    await new Promise((r) => setTimeout(r, 150));
    expect(
      (
        await pool.with(
          'k',
          Date.now() + 5000,
          async () => new Stub(2),
          async (c) => c,
        )
      ).n,
    ).toBe(2);
    await pool.closeAll();
  });
});
