import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES, loadConfig } from '../../src/config.ts';

/**
 * The systemd units and the environment file of deploy/systemd (docs/operating/deployment.md) are the production
 * start as hardening II defined it: the supervised pid is bin/platform-server.mjs, the role set per unit, the stop
 * timeout above the drain. `systemd-analyze verify` checks them where it exists; the example environment must load.
 */
const DIR = resolve(import.meta.dirname, '../../deploy/systemd');
const UNITS = ['platform-api.service', 'platform-worker.service'] as const;
const ANALYZE = '/usr/bin/systemd-analyze';

/** `[Section]` → key → values, in order (a key may repeat). */
function parseUnit(text: string): Map<string, Map<string, string[]>> {
  const sections = new Map<string, Map<string, string[]>>();
  let current: Map<string, string[]> | undefined;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const header = /^\[(\w+)\]$/.exec(line);
    if (header) sections.set(header[1]!, (current = new Map()));
    else {
      const eq = line.indexOf('=');
      expect(current, `a key before any section: ${line}`).toBeDefined();
      expect(eq, `not key=value: ${line}`).toBeGreaterThan(0);
      const key = line.slice(0, eq);
      current!.set(key, [...(current!.get(key) ?? []), line.slice(eq + 1)]);
    }
  }
  return sections;
}

function parseEnvFile(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of text.split('\n')) {
    if (!line.trim() || line.startsWith('#')) continue;
    const eq = line.indexOf('=');
    env[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return env;
}

describe('deployment files', () => {
  const env = parseEnvFile(readFileSync(join(DIR, 'platform.env.example'), 'utf8'));

  it.each(UNITS)('%s starts the supervised server in its role and outlasts its drain', (unit) => {
    const sections = parseUnit(readFileSync(join(DIR, unit), 'utf8'));
    expect([...sections.keys()]).toEqual(['Unit', 'Service', 'Install']);
    const service = sections.get('Service')!;
    expect(service.get('ExecStart')).toEqual(['/usr/bin/env node /opt/platform-api/bin/platform-server.mjs']);
    expect(existsSync(resolve(import.meta.dirname, '../../bin/platform-server.mjs'))).toBe(true);
    expect(service.get('EnvironmentFile')).toEqual(['/etc/platform-api/platform.env']);
    const role = unit === 'platform-api.service' ? 'api' : 'worker';
    expect(service.get('Environment')).toEqual([`PLATFORM_ROLE=${role} NODE_ENV=production`]);
    expect(service.get('KillSignal')).toEqual(['SIGTERM']);
    const config = loadConfig({ ...env, PLATFORM_ROLE: role });
    expect(config.role).toBe(role);
    expect(Number(service.get('TimeoutStopSec')![0]) * 1000).toBeGreaterThan(config.shutdownGraceMs + config.webhook.timeoutMs);
  });

  it('the example environment names only variables the server reads, and loads for both roles', () => {
    expect(Object.keys(env).filter((name) => !CONFIG_VARIABLES.includes(name))).toEqual([]);
    expect(env.PLATFORM_ROLE, 'the role belongs to the unit').toBeUndefined();
    for (const role of ['api', 'worker']) expect(() => loadConfig({ ...env, PLATFORM_ROLE: role })).not.toThrow();
  });

  it.skipIf(!existsSync(ANALYZE))('systemd-analyze verify finds nothing to say about either unit', () => {
    const run = spawnSync(ANALYZE, ['verify', ...UNITS.map((u) => join(DIR, u))], { encoding: 'utf8', timeout: 30_000 });
    expect({ status: run.status, stderr: run.stderr.trim() }).toEqual({ status: 0, stderr: '' });
  });
});
