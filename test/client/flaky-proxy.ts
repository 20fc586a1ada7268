import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the proxy does with the next matching request instead of forwarding it. */
export type Interference = { status: number; headers?: Record<string, string>; body?: unknown } | 'drop-connection';

export interface SeenRequest {
  method: string;
  path: string;
  idempotencyKey: string | undefined;
  at: number;
}

/**
 * A tiny node:http proxy in front of the real server: it answers the queued
 * interferences first (a 503, a 429 with Retry-After, a dropped connection),
 * then forwards requests untouched. It records every request it sees.
 */
export class FlakyProxy {
  readonly seen: SeenRequest[] = [];
  private queue: Interference[] = [];
  private readonly server = createServer((req, res) => this.handle(req, res));

  constructor(private readonly target: string) {}

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  interfere(...next: Interference[]) {
    this.queue.push(...next);
  }

  async stop() {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: IncomingMessage, res: ServerResponse) {
    const key = req.headers['idempotency-key'];
    this.seen.push({ method: req.method!, path: req.url!, idempotencyKey: Array.isArray(key) ? key[0] : key, at: Date.now() });
    const next = this.queue.shift();
    if (next === 'drop-connection') {
      req.socket.destroy();
      return;
    }
    if (next) {
      req.resume();
      res.writeHead(next.status, { 'content-type': 'application/json', 'request-id': 'req_proxy', ...next.headers });
      res.end(
        JSON.stringify(
          next.body ?? { error: { code: 'service_unavailable', message: 'proxy says no', param: null, request_id: 'req_proxy' } },
        ),
      );
      return;
    }
    const url = new URL(req.url!, this.target);
    const upstream = httpRequest(url, { method: req.method, headers: { ...req.headers, host: url.host } }, (up) => {
      res.writeHead(up.statusCode!, up.headers);
      up.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  }
}
