import type { TestProject } from 'vitest/node';
import { installedBrokers, startBrokers, type BrokerKind, type BrokerUrls } from './brokers.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The brokers this run started (test/support/brokers.ts): absent kinds are not installed here. */
    brokers: BrokerUrls;
  }
}

const ALL: BrokerKind[] = ['rabbitmq', 'nats', 'redis'];

/**
 * Starts the installed brokers once per run when the run includes the tests that use them (the whole suite, or a
 * filter naming test/destination/): a run of other files does not wait for RabbitMQ's ~9 s start. CI sets
 * REQUIRE_BROKERS=1 (.ci/run installs the packages), so a broker missing there fails the run instead of skipping.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // The command line's file filters (vitest's own field; absent or empty on a whole run).
  const filters = (project.vitest as unknown as { filenamePattern?: string[] }).filenamePattern ?? [];
  const wanted = filters.length === 0 || filters.some((f) => f.includes('destination'));
  const installed = installedBrokers();
  const missing = ALL.filter((k) => !installed.includes(k));
  if (process.env.REQUIRE_BROKERS === '1' && missing.length)
    throw new Error(`REQUIRE_BROKERS=1 but ${missing.join(', ')} not installed (Debian: rabbitmq-server, nats-server, redis-server)`);
  if (!wanted || process.env.BROKERS === '0' || installed.length === 0) {
    project.provide('brokers', {});
    return async () => {};
  }
  const { urls, stop } = await startBrokers(installed);
  project.provide('brokers', urls);
  return stop;
}
