import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { buildSchema } from 'graphql';
import { expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

it('schema.graphql passes the GraphQL schema linter (graphql-lint.config.mjs)', async () => {
  const eslint = new ESLint({ cwd: root, overrideConfigFile: 'graphql-lint.config.mjs' });
  const [result] = await eslint.lintFiles(['schema.graphql']);
  const problems = result!.messages.map((m) => `${m.line}:${m.column} ${m.ruleId}: ${m.message}`);
  expect(problems).toEqual([]);
});

it('every root field has a description (the linter cannot check it with three root types)', () => {
  const schema = buildSchema(readFileSync(`${root}/schema.graphql`, 'utf8'));
  const bare = [schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()].flatMap((type) =>
    Object.values(type!.getFields())
      .filter((f) => !f.description)
      .map((f) => `${type!.name}.${f.name}`),
  );
  expect(bare).toEqual([]);
});
