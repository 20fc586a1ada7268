import { LoggingMessageNotificationSchema, type LoggingMessageNotification } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect } from 'vitest';
import { appTest, buildTenant, type TestApp } from '../support/kit.ts';
import { connectMcp, toolError, toolValue } from './helpers.ts';

/**
 * `logging/setLevel` decides which log messages a session's calls send
 * (`notifications/message`): none before a level is set; then those at or
 * above it: each call (debug), an operation a change started (info), a
 * refusal or a replay (warning). No message carries an argument or an answer.
 */
const test = appTest();
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));

const launch = (key: string) => ({
  name: 'distributions_create',
  arguments: { name: 'Logged', budget: 0, deployments: [{ provider: 'sandbox', config: {} }], idempotency_key: key },
});

describe('log messages of a session', () => {
  test('the level filters: nothing before one is set, warnings only at warning, the started operation at info', async () => {
    const { token } = await buildTenant(t, ['distributions:write', 'distributions:launch', 'webhooks:write']);
    const client = await connectMcp(t.origin, token);
    const heard: LoggingMessageNotification['params'][] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void heard.push(n.params));
    const take = () => heard.splice(0).map((p) => [p.level, (p.data as { message: string }).message]);

    // No level set: the answers come as they did, with no log.
    toolValue(await client.callTool(launch('log-1')));
    toolError(await client.callTool({ name: 'programs_list', arguments: {} }));
    expect(take()).toEqual([]);

    await client.setLoggingLevel('warning');
    const started = toolValue(await client.callTool(launch('log-2')));
    expect(take()).toEqual([]); // the started operation is info: below warning
    expect(toolError(await client.callTool({ name: 'programs_list', arguments: {} })).code).toBe('missing_scope');
    toolValue(await client.callTool(launch('log-2'))); // the same key again: a replay
    expect(take()).toEqual([
      ['warning', 'programs_list refused: missing_scope'],
      ['warning', expect.stringMatching(/^distributions_create replayed: /)],
    ]);

    await client.setLoggingLevel('info');
    const again = toolValue(await client.callTool(launch('log-3')));
    expect(again.operation.id).not.toBe(started.operation.id);
    expect(take()).toEqual([['info', expect.stringContaining(`started operation ${again.operation.id} (distribution.launch)`)]]);

    // At debug every call is told too; a secret the answer withholds is never in a log line, nor are the arguments.
    await client.setLoggingLevel('debug');
    toolValue(await client.callTool({ name: 'webhook_endpoints_create', arguments: { url: 'https://logged.example/hook' } }));
    const lines = JSON.stringify(heard);
    expect(take()).toEqual([['debug', 'webhook_endpoints_create called']]);
    expect(lines).not.toMatch(/whsec_|logged\.example/);
    await client.close();
  });
});
