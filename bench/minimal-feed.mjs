/**
 * The feed's outside baseline (bench/run.ts, scenario 1): what a minimal
 * server does for `GET /events?limit=100` in a process of its own, a
 * `node:http` handler with its own `pg` pool, one prepared statement and a
 * plain presenter, answering the REST route's body. Nothing of the product
 * runs here (no Koa, no auth, no domain code), so the product's route is
 * judged against the floor a hand-written server sets, not against its own
 * statement in its own process. Plain JavaScript, started with plain `node`.
 *
 *   node bench/minimal-feed.mjs <database url> <organization id> <pool size>
 *
 * Prints `{"url": ...}` on stdout once it listens; stops on SIGTERM.
 */
import { createServer } from 'node:http';
import pg from 'pg';

const [url, organizationId, poolSize = '16'] = process.argv.slice(2);
const pool = new pg.Pool({ connectionString: url, max: Number(poolSize) });
const page = {
  name: 'minimal_feed_page',
  text: 'SELECT id, type, seq, subject_type, subject_id, data, operation_id, brand_id, livemode, created_at FROM event WHERE organization_id = $1 AND seq IS NOT NULL ORDER BY seq LIMIT $2',
};

const server = createServer(async (req, res) => {
  try {
    const limit = Number(new URL(req.url, 'http://x').searchParams.get('limit') ?? 20);
    const { rows } = await pool.query({ ...page, values: [organizationId, limit + 1] });
    const data = [];
    for (let i = 0; i < rows.length && i < limit; i++) {
      const r = rows[i];
      data.push({
        id: r.id,
        object: 'event',
        type: r.type,
        seq: Number(r.seq),
        subject: { type: r.subject_type, id: r.subject_id },
        data: r.data,
        operation: r.operation_id,
        brand: r.brand_id,
        livemode: r.livemode,
        created_at: r.created_at.toISOString(),
      });
    }
    const body = JSON.stringify({ object: 'list', data, has_more: rows.length > limit });
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  } catch (e) {
    res.writeHead(500).end(String(e));
  }
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${server.address().port}` })}\n`);
});
process.on('SIGTERM', () => {
  server.close();
  pool.end().then(() => process.exit(0));
});
