import { errorBox, gql } from '../api.ts';
import { clock, fill, h, status, table, time } from '../dom.ts';
import type { Ctx } from '../view.ts';
import type { WebhookAttempt, WebhookDelivery } from '../schema.ts';

/** A delivery as the console shows it: its state and each attempt (status code, duration, error, excerpt). */
export type DeliveryRow = Pick<
  WebhookDelivery,
  'id' | 'endpointId' | 'eventId' | 'eventType' | 'status' | 'attempts' | 'nextAttemptAt' | 'lastStatusCode' | 'createdAt'
> & { attemptLog: Pick<WebhookAttempt, 'number' | 'statusCode' | 'durationMs' | 'error' | 'responseExcerpt' | 'startedAt'>[] };

export const DELIVERY_FIELDS =
  'id endpointId eventId eventType status attempts nextAttemptAt lastStatusCode createdAt attemptLog { number statusCode durationMs error responseExcerpt startedAt }';

export const RETRY = 'mutation($endpointId: ID!, $id: ID!) { retryWebhookDelivery(endpointId: $endpointId, id: $id) { id status } }';

/**
 * Deliveries with their attempts, and a Retry button on each (scope webhooks:write). After a retry the list is
 * read again until the new attempt shows (the worker sends it at once), at most for 15 s.
 */
export function deliveriesPanel(ctx: Ctx, load: () => Promise<DeliveryRow[]>, by: 'endpoint' | 'event'): HTMLElement {
  const box = h('div', { class: 'deliveries', 'aria-live': 'polite' }, h('p', { class: 'muted' }, 'Loading deliveries…'));
  const draw = (rows: DeliveryRow[]) =>
    fill(
      box,
      rows.length === 0
        ? h('p', { class: 'muted empty' }, 'No deliveries.')
        : rows.map((d) =>
            h(
              'div',
              { class: 'panel delivery', 'data-id': d.id, 'data-status': d.status },
              h(
                'div',
                { class: 'toolbar' },
                h(
                  'strong',
                  {},
                  by === 'event'
                    ? h('a', { href: `#/webhooks/${d.endpointId}` }, d.endpointId)
                    : h('a', { href: `#/feed` }, d.eventType ?? d.eventId),
                ),
                status(d.status),
                h('span', { class: 'muted' }, `${d.attempts} attempt${d.attempts === 1 ? '' : 's'}`),
                d.nextAttemptAt ? h('span', { class: 'muted' }, 'next ', time(d.nextAttemptAt)) : null,
                ctx.has('webhooks:write') && d.status !== 'PENDING'
                  ? h('button', { type: 'button', class: 'retry', onclick: () => retry(d) }, 'Retry')
                  : null,
              ),
              table(
                ['#', 'Status', 'Duration', 'Error', 'Excerpt', 'Started'],
                d.attemptLog.map((a) => ({
                  cells: [
                    a.number,
                    a.statusCode ?? '–',
                    `${a.durationMs} ms`,
                    a.error ?? '',
                    h('code', { class: 'excerpt' }, a.responseExcerpt ?? ''),
                    clock(a.startedAt),
                  ],
                })),
                'No attempt yet.',
              ),
            ),
          ),
    );
  const refresh = () => load().then(draw, (err) => fill(box, errorBox(err)));
  const retry = async (d: DeliveryRow) => {
    try {
      await gql(RETRY, { endpointId: d.endpointId, id: d.id });
    } catch (err) {
      box.prepend(errorBox(err));
      return;
    }
    for (let i = 0; i < 30 && box.isConnected; i++) {
      const rows = await load();
      draw(rows);
      if ((rows.find((r) => r.id === d.id)?.attemptLog.length ?? 0) > d.attemptLog.length) return;
      await new Promise((r) => setTimeout(r, 500));
    }
  };
  void refresh();
  return box;
}
