import { describe, expect, test } from 'vitest';
import { drift, mask, docBlocks, withPrintedOutputs } from './readme-blocks.ts';

/** The README runner's own rules, without a server: what runs, what is compared, what a drift reports. */
const README = [
  'Intro.',
  '',
  '```sh',
  'B=http://127.0.0.1:4000',
  '```',
  '',
  '```console',
  '$ curl -s $B/thing \\',
  "    -H 'x: y'",
  '{"id":"org_0123456789abcdef0123456789abcdef","created_at":"2026-11-25T15:04:22.123Z"}',
  '# a note for the reader',
  '',
  '$ curl -s $B/x -d \'{"a":1,',
  '                     "b":2}\'',
  '{"ok":true}',
  '$ curl -sN --max-time 2 $B/stream',
  ':',
  '# exit 28: the stream stays open',
  '```',
  '',
  '<!-- docs-test: skip: runs until Ctrl-C -->',
  '```console',
  '$ npx platform listen',
  '```',
  '',
  '```json',
  '{"not":"run"}',
  '```',
  '',
  '<!-- docs-test: requires: postgres -->',
  '```sh',
  'npx platform migrate',
  '```',
].join('\n');

describe('Doc blocks', () => {
  test('console and sh blocks in order, with continued commands, notes, exit codes, skips and requirements', () => {
    const blocks = docBlocks(README);
    expect(blocks.map((b) => [b.index, b.line, b.lang, b.skip, b.requires])).toEqual([
      [0, 3, 'sh', undefined, undefined],
      [1, 7, 'console', undefined, undefined],
      [2, 22, 'console', 'runs until Ctrl-C', undefined],
      [3, 31, 'sh', undefined, 'postgres'],
    ]);
    expect(blocks[0]!.commands).toEqual([{ line: 4, command: 'B=http://127.0.0.1:4000', expected: null, exitCode: 0 }]);
    expect(blocks[1]!.commands).toEqual([
      {
        line: 8,
        command: "curl -s $B/thing \\\n    -H 'x: y'",
        expected: ['{"id":"org_0123456789abcdef0123456789abcdef","created_at":"2026-11-25T15:04:22.123Z"}'],
        exitCode: 0,
      },
      { line: 13, command: 'curl -s $B/x -d \'{"a":1,\n                     "b":2}\'', expected: ['{"ok":true}'], exitCode: 0 },
      { line: 16, command: 'curl -sN --max-time 2 $B/stream', expected: [':'], exitCode: 28 },
    ]);
  });

  test('a requires: marker names a known server; an unknown one is refused', () => {
    expect(() => docBlocks(['<!-- docs-test: requires: kafka -->', '```sh', 'true', '```'].join('\n'))).toThrow(
      "line 1: unknown requirement 'kafka' (known: postgres, rabbitmq, nats, redis)",
    );
  });

  test('masks: origin, times, ids, secrets', () => {
    expect(
      mask(
        'http://127.0.0.1:39123/x org_0123456789abcdef0123456789abcdef req_0123456789abcdef01234567 2026-11-25T15:04:22.123Z ' +
          'Wed, 25 Nov 2026 15:04:22 GMT sk_platform_live_AbC123 ut_abcdefghijkl op_tok_abcdef whsec_abc+/def=',
        'http://127.0.0.1:39123',
      ),
    ).toBe(
      'http://127.0.0.1:4000/x org_<id> req_<id> <time> <http-date> sk_platform_live_<secret> ut_<secret> op_tok_<secret> whsec_<secret>',
    );
  });

  test('a drift names each differing line, expected against actual; … matches anything', () => {
    const [command] = docBlocks(['```console', '$ curl -s $B/x', '{"status":"partial","ms":…}', 'done', '```'].join('\n'))[0]!.commands;
    expect(drift(command!, { output: '{"status":"partial","ms":17}\ndone\n', exitCode: 0 }, 'http://127.0.0.1:1')).toBeUndefined();
    expect(drift(command!, { output: '{"status":"failed","ms":17}\n', exitCode: 1 }, 'http://127.0.0.1:1')).toBe(
      [
        'exit status 1, expected 0',
        '  output line 1:',
        '    expected: {"status":"partial","ms":…}',
        '    actual:   {"status":"failed","ms":17}',
        '  output line 2:',
        '    expected: done',
        '    actual:   (nothing)',
      ].join('\n'),
    );
  });

  test('README_UPDATE: shown outputs become the printed ones, elided ones stay, ids are renamed throughout, secrets hidden', () => {
    const old = 'org_00000000000000000000000000000001';
    const fresh = 'org_99999999999999999999999999999999';
    const markdown = [
      `Prose naming ${old}.`,
      '```console',
      '$ curl -s $B/a',
      `{"id":"${old}","n":1}`,
      '# a note',
      '',
      '$ curl -s $B/b',
      `{"id":"${old}",…}`,
      '```',
    ].join('\n');
    const printed = new Map([
      [3, `{"id":"${fresh}","n":2,"secret":"sk_platform_live_0123456789abcdefghijABCDEFGHIJ"}\n`],
      [7, `{"id":"${fresh}","n":3}\n`],
    ]);
    expect(withPrintedOutputs(markdown, printed).split('\n')).toEqual([
      `Prose naming ${fresh}.`,
      '```console',
      '$ curl -s $B/a',
      `{"id":"${fresh}","n":2,"secret":"sk_platform_live_EXAMPLExxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}`,
      '# a note',
      '',
      '$ curl -s $B/b',
      `{"id":"${fresh}",…}`,
      '```',
    ]);
  });
});
