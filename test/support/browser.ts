import { existsSync } from 'node:fs';
import type { Browser } from 'playwright-core';

/**
 * Headless Chromium for browser tests: Debian's package (`apt-get install
 * chromium`, which .ci/run does), driven by playwright-core. Without it the
 * browser suites skip, so `npm test` needs nothing installed; CI always has it.
 */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM);

export async function launchChromium(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: CHROMIUM,
    // Quiet on a closed network: no background fetches, updates or sync to be refused.
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
