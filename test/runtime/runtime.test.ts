import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { Runtime } from '../../src/runtime/runtime.ts';

const log = pino({ level: 'silent' });

function recorder() {
  const calls: string[] = [];
  const service = (name: string, failStart = false) => ({
    name,
    async start() {
      calls.push(`start ${name}`);
      if (failStart) throw new Error(`${name} failed`);
    },
    stop: () => void calls.push(`stop ${name}`),
  });
  return { calls, service };
}

describe('Runtime', () => {
  it('starts services in the order added, skips the ones a role does not run, stops in reverse once', async () => {
    const { calls, service } = recorder();
    const rt = new Runtime(log).add(service('a')).add(service('b'), false).add(service('c'));
    expect(rt.names).toEqual(['a', 'c']);
    await rt.start();
    await rt.stop();
    await rt.stop();
    expect(calls).toEqual(['start a', 'start c', 'stop c', 'stop a']);
  });

  it('a service that fails to start stops the ones started before it and rethrows', async () => {
    const { calls, service } = recorder();
    const rt = new Runtime(log).add(service('a')).add(service('b', true)).add(service('c'));
    await expect(rt.start()).rejects.toThrow('b failed');
    expect(calls).toEqual(['start a', 'start b', 'stop a']);
  });

  it('a stop that throws does not keep the others from stopping', async () => {
    const calls: string[] = [];
    const rt = new Runtime(log)
      .add({ name: 'a', stop: () => void calls.push('stop a') })
      .add({
        name: 'b',
        stop: () => {
          throw new Error('b');
        },
      })
      .add({ name: 'c', stop: () => void calls.push('stop c') });
    await rt.start();
    await rt.stop();
    expect(calls).toEqual(['stop c', 'stop a']);
  });
});
