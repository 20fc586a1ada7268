/**
 * The feed's outside baseline (bench/run.ts, scenario 1): what a minimal
 * server does for `GET /events?limit=100` in a process of its own, a
 * `node:http` handler with its own `pg` pool, one prepared statement and a
 * plain presenter, answering the REST route's body. Nothing of the product
 * runs here (no Koa, no auth, no domain code), so the product's route is
 * judged against the floor a hand-written server sets, not against its own
 * statement in its own process. `POST /mcp` answers the same page as an MCP
 * tool call (scenario 11's floor). Plain JavaScript, started with plain `node`.
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
  // created_at formatted by the database, as the product's feed reads it: no Date parsed to be formatted again.
  text: `SELECT id, type, seq, subject_type, subject_id, data, operation_id, brand_id, livemode,
    to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at
    FROM event WHERE organization_id = $1 AND seq IS NOT NULL ORDER BY seq LIMIT $2`,
};

/** The feed's page as the REST route answers it, serialized once. */
async function feedPage(limit) {
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
      created_at: r.created_at,
    });
  }
  return JSON.stringify({ object: 'list', data, has_more: rows.length > limit });
}

/**
 * `POST /mcp`: the least an MCP server can do for `tools/call` of `events_list` (scenario 11's floor): read and parse
 * the JSON-RPC request, and answer the same page twice, as `structuredContent` and as its JSON text in `content`
 * (which MCP asks of a tool with an output schema), the page serialized once and the text escaped once.
 */
async function toolCall(req) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const rpc = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  const text = await feedPage(Number(rpc.params.arguments.limit ?? 20));
  return `{"result":{"content":[{"type":"text","text":${JSON.stringify(text)}}],"structuredContent":${text}},"jsonrpc":"2.0","id":${JSON.stringify(rpc.id)}}`;
}

const server = createServer(async (req, res) => {
  try {
    const body =
      req.method === 'POST' && req.url === '/mcp'
        ? await toolCall(req)
        : await feedPage(Number(new URL(req.url, 'http://x').searchParams.get('limit') ?? 20));
    // One Buffer, encoded once: as a string, Node would join it to the header block and flatten the two first.
    const bytes = Buffer.from(body);
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': bytes.length });
    res.end(bytes);
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
