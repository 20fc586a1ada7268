import { describe, expect } from 'vitest';
import { appTest, expectPlatformError, type TestApp } from '../support/kit.ts';
import { buildConnectBrand, hsHandoff, join, status } from '../support/connect.ts';

/**
 * Partner connect is rate-limited per publishable key and per client IP (configurable), with the usual 429 envelope.
 * The test's own address is a trusted proxy, so the forwarded client address counts (src/http/client-address.ts).
 */
const test = appTest({
  config: {
    connectRateLimits: { key: { perSecond: 1, burst: 3 }, ip: { perSecond: 1, burst: 8 } },
    clientAddress: { trustedProxies: ['127.0.0.1'], ipv6PrefixLength: 64 },
  },
});
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));

/** Every bucket full again (the fake clock refills them). */
const refill = () => t.clock.advance(60_000);

describe('rate limits', () => {
  test('per key: past its burst a key is 429 rate_limited with Retry-After and RateLimit-*; time refills it', async () => {
    const b = await buildConnectBrand(t);
    refill();
    const { session } = (await join(t, b.pk, await hsHandoff(t, b))).body;
    expect((await status(t, b.pk, session)).status).toBe(200);
    const third = await status(t, b.pk, session);
    expect(third.status).toBe(200);
    expect(third.headers.get('ratelimit-limit')).toBe('3');
    const limited = await status(t, b.pk, session);
    expectPlatformError(limited, 429, 'rate_limited');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(limited.headers.get('ratelimit-remaining')).toBe('0');
    t.clock.advance(1000);
    expect((await status(t, b.pk, session)).status).toBe(200);
  });

  test('per client IP: many keys from one address share its bucket', async () => {
    const brands = [await buildConnectBrand(t), await buildConnectBrand(t), await buildConnectBrand(t), await buildConnectBrand(t)];
    refill();
    const answers: number[] = [];
    for (const b of brands) for (let i = 0; i < 3; i++) answers.push((await status(t, b.pk, `cs_${'A'.repeat(36)}`)).status);
    // 8 fit in the IP's burst (each key's 3 would all have fitted), the rest are 429.
    expect(answers.filter((s) => s === 401)).toHaveLength(8);
    expect(answers.filter((s) => s === 429)).toHaveLength(4);
  });

  test('per client IP behind a trusted proxy: each forwarded client has its own bucket; entries the client wrote do not', async () => {
    const brands = [await buildConnectBrand(t), await buildConnectBrand(t), await buildConnectBrand(t), await buildConnectBrand(t)];
    const session = `cs_${'A'.repeat(36)}`;
    refill();
    const separate: number[] = [];
    for (const [n, b] of brands.entries())
      for (let i = 0; i < 3; i++) separate.push((await status(t, b.pk, session, { 'x-forwarded-for': `203.0.113.${n + 1}` })).status);
    expect(separate.filter((s) => s === 401)).toHaveLength(12);

    refill();
    const spoofed: number[] = [];
    for (const [n, b] of brands.entries())
      for (let i = 0; i < 3; i++)
        spoofed.push((await status(t, b.pk, session, { 'x-forwarded-for': `198.51.100.${n * 3 + i}, 203.0.113.9` })).status);
    // The right-most untrusted entry is the client: the left ones vary, and all share 203.0.113.9's burst of 8.
    expect(spoofed.filter((s) => s === 401)).toHaveLength(8);
    expect(spoofed.filter((s) => s === 429)).toHaveLength(4);
  });
});
