import type { Connection, RelationshipStatus } from './resources/types.ts';
import { SURFACE_B_PATH } from './platform-client.ts';
import { type FetchLike, type RequestOptions, RequestSender } from './request-sender.ts';

/**
 * The partner-connect client for a browser (or any fetch runtime): a
 * publishable key (`pk_live_...`, safe to ship in a page; CORS admits only the
 * brand's `allowed_origins`) and the three connect routes. `join` redeems the
 * handoff token the partner site's server signed and keeps the connect
 * session it answers (`cs_...`, 30 minutes) for `status` and `connect`, which
 * send it in the `Connect-Session` header. A handoff is single use, so `join`
 * is never retried.
 */
export interface ConnectClientOptions {
  /** The brand's publishable key, `pk_live_...`. */
  publishableKey: string;
  /** The API origin, e.g. `https://api.example.com`. */
  origin: string;
  /** A session from an earlier `join` (e.g. kept in sessionStorage). */
  session?: string;
  timeoutMs?: number;
  fetch?: FetchLike;
}

export interface ConnectStatus {
  object: 'connect_status';
  brand: { id: string; displayName: string | null; primaryColor: string | null; accentColor: string | null; requiredAssertions: string[] };
  entity: string;
  relationship: { id: string; status: RelationshipStatus } | null;
  enrollment: {
    id: string;
    program: string;
    status: 'pending' | 'approved' | 'rejected' | 'active' | 'paused';
    standing: 'not_qualified' | 'qualified' | 'grace';
  } | null;
  connections: Pick<Connection, 'id' | 'provider' | 'accountId' | 'status'>[];
  sessionExpiresAt: string;
}

export class ConnectClient {
  readonly sender: RequestSender;
  /** The connect session `join` answered (or the one given). */
  session: string | undefined;

  constructor(opts: ConnectClientOptions) {
    this.sender = new RequestSender({
      baseUrl: `${opts.origin.replace(/\/+$/, '')}${SURFACE_B_PATH}/connect`,
      token: opts.publishableKey,
      timeoutMs: opts.timeoutMs,
      fetch: opts.fetch,
    });
    this.session = opts.session;
  }

  /** Redeems the handoff (once: never retried) and keeps the session it answers. */
  async join(handoff: string, options?: RequestOptions): Promise<{ session: string; status: ConnectStatus }> {
    const res = await this.sender.request<{ session: string; status: ConnectStatus }>({
      method: 'POST',
      path: '/join',
      body: { handoff },
      options: { ...options, maxRetries: 0 },
    });
    this.session = res.body.session;
    return res.body;
  }

  /** The session's partner: relationship, enrollment in the default program, connections, the brand's display settings. */
  async status(options?: RequestOptions): Promise<ConnectStatus> {
    return (await this.sender.request<ConnectStatus>({ method: 'GET', path: '/status', options: this.withSession(options) })).body;
  }

  /** Records the partner's account at a provider. */
  async connect(params: { provider: string; accountId: string; grants?: string[] }, options?: RequestOptions): Promise<Connection> {
    return (await this.sender.request<Connection>({ method: 'POST', path: '/connect', body: params, options: this.withSession(options) }))
      .body;
  }

  private withSession(options: RequestOptions = {}): RequestOptions {
    if (!this.session) throw new Error('No connect session: call join(handoff) first');
    return { ...options, headers: { ...options.headers, 'connect-session': this.session } };
  }
}
