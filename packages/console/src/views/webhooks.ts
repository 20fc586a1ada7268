import { errorBox, gql } from '../api.ts';
import { fill, formValues, h, secretBox, status, table, time } from '../dom.ts';
import { live } from '../live.ts';
import type { Ctx, View } from '../view.ts';
import type {
  EventDestination,
  Operation,
  WebhookDeliveryStatusSummary,
  WebhookEndpoint,
  WebhookEndpointHealth,
  WebhookHealthWindow,
} from '../schema.ts';
import { DELIVERY_FIELDS, type DeliveryRow, deliveriesPanel } from './deliveries.ts';

type Window = Pick<WebhookHealthWindow, 'attempts' | 'successRate' | 'p50Ms' | 'p99Ms'>;
type EndpointRow = Pick<
  WebhookEndpoint,
  'id' | 'url' | 'description' | 'status' | 'disabledReason' | 'failingSince' | 'enabledEvents' | 'rotatedAt' | 'createdAt'
> & {
  health: Pick<WebhookEndpointHealth, 'lastSuccessAt' | 'lastFailure'> & { lastHour: Window; lastDay: Window };
  webhookDelivery: WebhookDeliveryStatusSummary;
};

export const WINDOW = 'attempts successRate p50Ms p99Ms';
export const ENDPOINT = `id url description status disabledReason failingSince enabledEvents rotatedAt createdAt
  health { lastHour { ${WINDOW} } lastDay { ${WINDOW} } lastSuccessAt lastFailure { at statusCode error } }
  webhookDelivery { pending failing succeeded exhausted }`;
export const LIST = `{ webhookEndpoints(first: 100) { edges { node { ${ENDPOINT} } } } }`;
/** Event destinations (brokers) share the endpoints' engine and health: listed beside them, read-only here. */
export const DESTINATIONS = `{ eventDestinations(first: 100) { edges { node { id type url status failingSince health { lastHour { ${WINDOW} } } } } } }`;
type DestinationRow = Pick<EventDestination, 'id' | 'type' | 'url' | 'status' | 'failingSince'> & { health: { lastHour: Window } };
export const ONE = `query($id: ID!) { webhookEndpoint(id: $id) { ${ENDPOINT} } }`;
export const DELIVERIES = `query($id: ID!) { webhookEndpoint(id: $id) { deliveries(first: 25) { edges { node { ${DELIVERY_FIELDS} } } } } }`;
/** The endpoint's health transitions, each with the endpoint after it (the detail view redraws from it). */
export const HEALTH = `subscription($id: ID!, $after: String) {
  webhookEndpointHealthChanged(id: $id, after: $after) { id endpoint { ${ENDPOINT} } } }`;
export const CREATE = `mutation($url: String!, $description: String, $events: [String!]) {
  createWebhookEndpoint(url: $url, description: $description, enabledEvents: $events) { id secret } }`;
export const UPDATE = `mutation($id: ID!, $url: String, $description: String, $events: [String!], $status: WebhookEndpointStatus) {
  updateWebhookEndpoint(id: $id, url: $url, description: $description, enabledEvents: $events, status: $status) { id } }`;
export const ROTATE = 'mutation($id: ID!) { rotateWebhookEndpointSecret(id: $id) { id secret } }';
export const REPLAY = `mutation($id: ID!, $after: Int, $since: String, $until: String, $onlyFailed: Boolean) {
  replayWebhookEndpoint(id: $id, startingAfter: $after, since: $since, until: $until, onlyFailed: $onlyFailed) { id status } }`;

const rate = (w: Window) => (w.successRate === null ? '–' : `${Math.round(w.successRate * 100)}% of ${w.attempts}`);
const events = (s: string | undefined) =>
  s
    ? s
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean)
    : [];

export const webhooksView: View = (main, ctx, [id]) => (id ? endpointView(main, ctx, id) : listView(main, ctx));

function listView(main: HTMLElement, ctx: Ctx): void {
  const list = h('div', {}, h('p', { class: 'muted' }, 'Loading endpoints…'));
  const out = h('div', {});
  const load = () =>
    gql<{ webhookEndpoints: { edges: { node: EndpointRow }[] } }>(LIST).then(
      (r) =>
        fill(
          list,
          table(
            ['URL', 'Status', 'Success (1 h)', 'p50 / p99 (1 h)', 'Failing since', 'Deliveries'],
            r.webhookEndpoints.edges.map(({ node: e }) => ({
              id: e.id,
              onPick: () => void (location.hash = `#/webhooks/${e.id}`),
              cells: [
                h('a', { href: `#/webhooks/${e.id}` }, e.url),
                status(e.status),
                rate(e.health.lastHour),
                e.health.lastHour.p50Ms === null ? '–' : `${e.health.lastHour.p50Ms} / ${e.health.lastHour.p99Ms} ms`,
                time(e.failingSince),
                `${e.webhookDelivery.succeeded} ok · ${e.webhookDelivery.failing} failing · ${e.webhookDelivery.exhausted} exhausted`,
              ],
            })),
            'No webhook endpoints yet.',
          ),
        ),
      (err) => fill(list, errorBox(err)),
    );
  const form = h(
    'form',
    { 'aria-label': 'New endpoint' },
    h('label', {}, 'URL', h('input', { name: 'url', type: 'url', required: true, placeholder: 'https://…', size: 32 })),
    h('label', {}, 'Description', h('input', { name: 'description', size: 18 })),
    h('label', {}, 'Events (comma-separated; empty: all)', h('input', { name: 'events', size: 24 })),
    h('button', { type: 'submit', class: 'primary' }, 'Create endpoint'),
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const f = formValues(form);
    try {
      const r = await gql<{ createWebhookEndpoint: { id: string; secret: string } }>(CREATE, {
        url: f.url,
        description: f.description || null,
        events: events(f.events),
      });
      fill(out, secretBox(`Signing secret of ${r.createWebhookEndpoint.id}`, r.createWebhookEndpoint.secret));
      form.reset();
      await load();
    } catch (err) {
      fill(out, errorBox(err));
    }
  });
  const brokers = h('div', {});
  fill(
    main,
    h('h2', {}, 'Webhook endpoints'),
    ctx.has('webhooks:write') ? form : h('p', { class: 'muted' }, 'Creating is hidden: needs scope webhooks:write.'),
    out,
    list,
    h('h2', {}, 'Event destinations'),
    brokers,
  );
  void load();
  void gql<{ eventDestinations: { edges: { node: DestinationRow }[] } }>(DESTINATIONS).then(
    (r) =>
      fill(
        brokers,
        table(
          ['Type', 'URL', 'Status', 'Success (1 h)', 'Failing since'],
          r.eventDestinations.edges.map(({ node: d }) => ({
            id: d.id,
            cells: [d.type.toLowerCase(), d.url, status(d.status), rate(d.health.lastHour), time(d.failingSince)],
          })),
          'No event destinations (create them with the API, the client or platform destinations create).',
        ),
      ),
    (err) => fill(brokers, errorBox(err)),
  );
}

function endpointView(main: HTMLElement, ctx: Ctx, id: string): () => void {
  const info = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));
  const out = h('div', {});
  const write = ctx.has('webhooks:write');
  const act = async (fn: () => Promise<unknown>) => {
    try {
      await fn();
      await load();
    } catch (err) {
      fill(out, errorBox(err));
    }
  };
  const draw = (e: EndpointRow) => {
    const form = h(
      'form',
      { 'aria-label': 'Update endpoint' },
      h('label', {}, 'URL', h('input', { name: 'url', type: 'url', value: e.url, size: 32 })),
      h('label', {}, 'Description', h('input', { name: 'description', value: e.description ?? '', size: 18 })),
      h('label', {}, 'Events', h('input', { name: 'events', value: e.enabledEvents.join(', '), size: 24 })),
      h('button', { type: 'submit' }, 'Save'),
    );
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      const f = formValues(form);
      void act(() => gql(UPDATE, { id, url: f.url, description: f.description || null, events: events(f.events) }));
    });
    fill(
      info,
      h(
        'dl',
        {},
        h('dt', {}, 'Status'),
        h('dd', {}, status(e.status), e.disabledReason ? ` (${e.disabledReason})` : ''),
        h('dt', {}, 'Success'),
        h('dd', {}, `last hour ${rate(e.health.lastHour)}, last day ${rate(e.health.lastDay)}`),
        h('dt', {}, 'Latency (1 h)'),
        h('dd', {}, e.health.lastHour.p50Ms === null ? '–' : `p50 ${e.health.lastHour.p50Ms} ms, p99 ${e.health.lastHour.p99Ms} ms`),
        h('dt', {}, 'Failing since'),
        h('dd', {}, time(e.failingSince)),
        h('dt', {}, 'Last success'),
        h('dd', {}, time(e.health.lastSuccessAt)),
        h('dt', {}, 'Last failure'),
        h(
          'dd',
          {},
          e.health.lastFailure
            ? [time(e.health.lastFailure.at), ` ${e.health.lastFailure.statusCode ?? ''} ${e.health.lastFailure.error ?? ''}`]
            : '–',
        ),
        h('dt', {}, 'Secret rotated'),
        h('dd', {}, time(e.rotatedAt)),
      ),
      write
        ? [
            h(
              'div',
              { class: 'toolbar' },
              h(
                'button',
                {
                  type: 'button',
                  class: e.status === 'ENABLED' ? 'danger' : '',
                  onclick: () => act(() => gql(UPDATE, { id, status: e.status === 'ENABLED' ? 'DISABLED' : 'ENABLED' })),
                },
                e.status === 'ENABLED' ? 'Disable' : 'Enable',
              ),
              h(
                'button',
                {
                  type: 'button',
                  onclick: () =>
                    act(async () => {
                      const r = await gql<{ rotateWebhookEndpointSecret: { secret: string } }>(ROTATE, { id });
                      fill(
                        out,
                        secretBox('New signing secret (the previous one signs for 24 h more)', r.rotateWebhookEndpointSecret.secret),
                      );
                    }),
                },
                'Rotate secret',
              ),
            ),
            form,
          ]
        : h('p', { class: 'muted' }, 'Changes are hidden: needs scope webhooks:write.'),
    );
  };
  const load = () =>
    gql<{ webhookEndpoint: EndpointRow }>(ONE, { id }).then(
      (r) => draw(r.webhookEndpoint),
      (err) => fill(info, errorBox(err)),
    );
  // Live: each health transition (failing, recovered, disabled by the server, enabled) redraws the endpoint; a
  // reconnect resumes after the last transition received.
  let lastTransition: string | null = null;
  const state = h('span', { class: 'chip health-state', role: 'status' }, 'connecting');
  const sub = live<{ webhookEndpointHealthChanged: { id: string; endpoint: EndpointRow } }>({
    query: HEALTH,
    variables: () => ({ id, after: lastTransition }),
    onNext: ({ webhookEndpointHealthChanged: c }) => {
      lastTransition = c.id;
      draw(c.endpoint);
    },
    onError: (err) => fill(out, errorBox(err)),
    onState: (st) => {
      state.textContent = st === 'live' ? 'health live' : st;
      state.className = `chip health-state ${st}`;
      // Read it again once subscribed: a transition before the subscription (or during a drop before the first
      // one) is then shown too.
      if (st === 'live') void load();
    },
  });
  const replay = h(
    'form',
    { 'aria-label': 'Replay a range' },
    h('label', {}, 'After seq', h('input', { name: 'after', inputmode: 'numeric', size: 7 })),
    h('label', {}, 'Since (RFC 3339)', h('input', { name: 'since', size: 20 })),
    h('label', {}, 'Until', h('input', { name: 'until', size: 20 })),
    h('label', { class: 'inline' }, h('input', { name: 'onlyFailed', type: 'checkbox', value: 'yes' }), ' only failed'),
    h('button', { type: 'submit' }, 'Replay'),
  );
  replay.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const f = formValues(replay);
    void act(async () => {
      const r = await gql<{ replayWebhookEndpoint: Pick<Operation, 'id' | 'status'> }>(REPLAY, {
        id,
        // Omitted, not null: the range takes exactly one start.
        after: f.after ? Number(f.after) : undefined,
        since: f.since || undefined,
        until: f.until || undefined,
        onlyFailed: f.onlyFailed === 'yes',
      });
      fill(
        out,
        h(
          'p',
          { class: 'notice' },
          'Replay started: ',
          h('a', { href: `#/operations/${r.replayWebhookEndpoint.id}` }, r.replayWebhookEndpoint.id),
        ),
      );
    });
  });
  const deliveries = () =>
    gql<{ webhookEndpoint: { deliveries: { edges: { node: DeliveryRow }[] } } }>(DELIVERIES, { id }).then((r) =>
      r.webhookEndpoint.deliveries.edges.map((x) => x.node),
    );
  fill(
    main,
    h('p', {}, h('a', { href: '#/webhooks' }, '← Endpoints')),
    h('h2', {}, 'Endpoint ', h('code', {}, id), ' ', state),
    out,
    info,
    h('h3', {}, 'Delivery log'),
    deliveriesPanel(ctx, deliveries, 'endpoint'),
    write ? [h('h3', {}, 'Replay a range'), replay] : null,
  );
  void load(); // at once, whether or not the subscription connects
  return () => sub.stop();
}
