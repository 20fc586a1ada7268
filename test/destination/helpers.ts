import type { TestApp } from '../support/kit.ts';

/** Event-destination helpers shared by the destination suites. */
export const ED = '/v1/platform/event_destinations';
export const WRITE = ['webhooks:read', 'webhooks:write'];

/** A RabbitMQ destination's body on a loopback broker (no credentials). */
export const RABBIT = { type: 'rabbitmq', url: 'amqp://127.0.0.1:5672', exchange: 'events' };
export const NATS_URL = 'nats://127.0.0.1:4222';

/** REST calls as one token. */
export function destinations(t: Pick<TestApp, 'http'>, token: string) {
  return {
    create: (body: unknown) => t.http.post(ED, body, { token }),
    list: (qs = '') => t.http.get(`${ED}${qs}`, { token }),
    get: (id: string) => t.http.get(`${ED}/${id}`, { token }),
    update: (id: string, body: unknown) => t.http.post(`${ED}/${id}`, body, { token }),
    rotate: (id: string) => t.http.post(`${ED}/${id}/rotate_secret`, undefined, { token }),
    del: (id: string) => t.http.request('DELETE', `${ED}/${id}`, undefined, { token }),
    deliveries: (id: string, qs = '') => t.http.get(`${ED}/${id}/deliveries${qs}`, { token }),
    replay: (id: string, body: unknown) => t.http.post(`${ED}/${id}/replay`, body, { token }),
  };
}
