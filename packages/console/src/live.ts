import { ApiError, failed, graphQLError, session } from './api.ts';

/**
 * A GraphQL subscription over graphql-ws (the `graphql-transport-ws` protocol, on /graphql) with the platform
 * token in connectionParams. A dropped connection reconnects with backoff and subscribes again with the variables
 * `variables()` gives then (the feed passes its last seq as startingAfter, so it resumes without a gap); a
 * GraphQL error, or a close the server means (44xx: the token or the kill switch), ends it for good.
 */
export type LiveState = 'connecting' | 'live' | 'reconnecting' | 'ended';

export interface LiveOptions<T> {
  query: string;
  variables: () => Record<string, unknown>;
  onNext: (data: T) => void;
  onError: (err: ApiError) => void;
  onState?: (state: LiveState) => void;
  onComplete?: () => void;
}

export function live<T>(opts: LiveOptions<T>): { stop(): void } {
  let socket: WebSocket | undefined;
  let stopped = false;
  let retries = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const state = (s: LiveState) => opts.onState?.(s);
  const end = (err?: ApiError) => {
    stopped = true;
    state('ended');
    if (err) opts.onError(failed('platform', err));
    socket?.close(1000);
  };

  const connect = () => {
    const token = session.get('platform');
    if (!token) return end(new ApiError('platform_token_required', 'Sign in with a platform token', null));
    state(retries === 0 ? 'connecting' : 'reconnecting');
    const ws = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/graphql`, 'graphql-transport-ws');
    socket = ws;
    ws.onopen = () => ws.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${token}` } }));
    ws.onmessage = (m) => {
      const msg = JSON.parse(String(m.data)) as { type: string; payload?: unknown };
      if (msg.type === 'connection_ack') {
        retries = 0;
        ws.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: opts.query, variables: opts.variables() } }));
        state('live');
      } else if (msg.type === 'ping') ws.send(JSON.stringify({ type: 'pong' }));
      else if (msg.type === 'next') {
        const p = msg.payload as { data?: T; errors?: { message: string; extensions?: { code?: string; request_id?: string } }[] };
        if (p.errors?.length) end(graphQLError(p.errors[0]));
        else if (p.data) opts.onNext(p.data);
      } else if (msg.type === 'error') end(graphQLError((msg.payload as never[])[0]));
      else if (msg.type === 'complete') {
        stopped = true;
        state('ended');
        opts.onComplete?.();
        ws.close(1000);
      }
    };
    ws.onclose = (e) => {
      if (stopped || socket !== ws) return;
      if (e.code >= 4400 && e.code < 4600) {
        const code = e.code === 4401 ? 'invalid_token' : e.code === 4503 ? 'developer_access_paused' : 'connection_refused';
        return end(new ApiError(code, e.reason || `The server closed the connection (${e.code})`, null));
      }
      retries++;
      state('reconnecting');
      timer = setTimeout(connect, Math.min(5000, 250 * 2 ** retries));
    };
  };
  connect();
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
      socket?.close(1000);
    },
  };
}
