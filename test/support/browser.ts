import { existsSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { onPostgres } from './database.ts';

/**
 * Headless Chromium for browser tests: Debian's package (`apt-get install
 * chromium`, which .ci/run does), driven by playwright-core. Without it the
 * browser suites skip, so `npm test` needs nothing installed; CI always has it.
 */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM);
/**
 * Whether this run drives the browser suites: Chromium is here and the run is the embedded-database pass. What a page
 * does in the browser does not depend on the database, and every API call a page makes is proven on both databases by
 * the HTTP suites, so CI's PostgreSQL pass does not start Chromium a second time.
 */
export const runsBrowser = hasChromium && !onPostgres();

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

/** Launches Chromium for the enclosing suite and closes it after; call inside a `describe.skipIf(!runsBrowser)`. */
export function useBrowser(): () => Browser {
  let browser: Browser | undefined;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(() => browser?.close());
  return () => browser!;
}

export interface OfflinePage {
  page: Page;
  /** Requests to any host but `origin`: refused, as on a machine with no internet. */
  elsewhere: string[];
  /** Uncaught page errors. */
  errors: string[];
  /** Console errors (a refused CSP directive, a failed resource). */
  consoleErrors: string[];
}

/** A 1280×800 page that may only reach `origin`. */
export async function offlinePage(browser: Browser, origin: string): Promise<OfflinePage> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const out: OfflinePage = { page, elsewhere: [], errors: [], consoleErrors: [] };
  await page.route('**/*', (route) => {
    const url = new URL(route.request().url());
    if (url.origin === origin) return route.continue();
    out.elsewhere.push(url.href);
    return route.abort();
  });
  page.on('pageerror', (e) => out.errors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') out.consoleErrors.push(m.text());
  });
  return out;
}
