// `npm run migrate`: applies pending migrations from prisma/migrations to the
// configured database (DATABASE_URL, else the embedded PGlite in DATA_DIR).
import { loadConfig } from '../config.ts';
import { openDatabase } from '../db/database.ts';

const config = loadConfig();
const db = await openDatabase(config);
try {
  const applied = await db.migrate();
  console.log(applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
} finally {
  await db.close();
}
