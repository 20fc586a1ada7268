import { defineConfig } from 'prisma/config';

// Used by the Prisma CLI (generate). The server never reads it: it builds its
// own driver adapter from src/config.ts and applies migrations itself.
export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
});
