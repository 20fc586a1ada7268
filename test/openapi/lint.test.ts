import { lint, loadConfig } from '@redocly/openapi-core';
import { expect, it } from 'vitest';
import { fileOf, OPENAPI_FILES } from '../../scripts/print-openapi.ts';

/**
 * The committed OpenAPI documents (current: test/openapi/files.test.ts) pass
 * Redocly's recommended rules with no error and no warning.
 */
it.for(Object.keys(OPENAPI_FILES))('%s passes the OpenAPI linter (Redocly recommended: 0 errors, 0 warnings)', async (path) => {
  const problems = await lint({ ref: fileOf(path), config: await loadConfig({}) });
  expect(problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`)).toEqual([]);
});
