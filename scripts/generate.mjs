// `prisma generate` without network: the CLI insists on locating a
// schema-engine binary at start even though generate never runs it, so point
// it at a harmless stub (see ../shared/TOOLCHAIN.md).
import { spawnSync } from 'node:child_process';
import { writeFileSync, chmodSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const dir = join(tmpdir(), 'platform-api-prisma');
mkdirSync(dir, { recursive: true });
const stub = join(dir, 'schema-engine-stub');
writeFileSync(stub, '#!/bin/sh\necho "schema-engine stub: use npm run migrate" >&2\nexit 1\n');
chmodSync(stub, 0o755);

const result = spawnSync('npx', ['prisma', 'generate'], {
  stdio: 'inherit',
  env: { ...process.env, PRISMA_SCHEMA_ENGINE_BINARY: stub, PRISMA_HIDE_UPDATE_MESSAGE: '1', CHECKPOINT_DISABLE: '1' },
});
process.exit(result.status ?? 1);
