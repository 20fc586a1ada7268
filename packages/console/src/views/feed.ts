import { errorBox, gql } from '../api.ts';
import { clock, fill, formValues, h, json, table } from '../dom.ts';
import { type LiveState, live } from '../live.ts';
import type { View } from '../main.ts';
import type { Event, EventCatalogueEntry, EventSubject, QueryEventsConnectionEdge } from '../schema.ts';
import { DELIVERY_FIELDS, type DeliveryRow, deliveriesPanel } from './deliveries.ts';

type FeedEvent = Pick<Event, 'id' | 'type' | 'seq' | 'brand' | 'data' | 'operation' | 'createdAt'> & { subject: EventSubject };

export const SUBSCRIPTION = `subscription($types: [String!], $brands: [String!], $subjectTypes: [String!], $subjectId: String, $after: String) {
  events(types: $types, brands: $brands, subjectTypes: $subjectTypes, subjectId: $subjectId, startingAfter: $after) {
    id type seq brand subject { type id } data operation createdAt
  }
}`;

/** How many past events a feed opened without "after seq" shows before the live ones. */
export const HISTORY_SIZE = 50;

/**
 * The feed's recent history under the filters (ascending seq) and its head: the newest event's seq (none when empty).
 * A feed opened without "after seq" shows the history, then subscribes after the head, so nothing is missed between
 * the two reads: the subscription replays whatever committed after the head.
 */
export const HISTORY = `query($type: String, $brands: [String!], $subjectTypes: [String!], $subjectId: String) {
  head: events(last: 1) { edges { cursor } }
  recent: events(last: ${HISTORY_SIZE}, type: $type, brands: $brands, subjectTypes: $subjectTypes, subjectId: $subjectId) {
    edges { node { id type seq brand subject { type id } data operation createdAt } }
  }
}`;

/** The public event types, for the type picker. */
export const TYPES = '{ eventTypes { type } }';

export const DELIVERIES = `query($id: ID!) { eventDeliveries(eventId: $id, first: 50) { edges { node { ${DELIVERY_FIELDS} } } } }`;

export const SHOWN = 500;

/**
 * The live feed: the events subscription in seq order, filtered by type, brand and subject; paused, it keeps
 * counting what arrives ("N new") and shows it on resume; after a reconnect it subscribes again after the last seq
 * it received, so nothing is missed or repeated. Opened without "after seq", it first shows the feed's recent
 * history and subscribes after the head it read with it, so every visit shows what already happened and even a drop
 * before the first new event resumes from a known seq. A row opens its JSON, its operation and its deliveries.
 */
export const feedView: View = (main, ctx) => {
  const events: FeedEvent[] = [];
  let pending: FeedEvent[] = [];
  let paused = false;
  let lastSeq: number | null = null;
  let selected: string | null = null;
  let sub: { stop(): void } | undefined;
  const brandSlug = (id: string | null) => (id ? (ctx.viewer?.brands.find((b) => b.id === id)?.slug ?? id) : 'organization');

  const state = h('span', { class: 'chip feed-state', role: 'status' }, 'connecting');
  const setState = (s: LiveState) => {
    state.textContent = s;
    state.className = `chip feed-state ${s}`;
  };
  const pauseButton = h('button', { type: 'button', class: 'pause', 'aria-pressed': 'false' }, 'Pause');
  const list = h('div', { class: 'feed-list' });
  const detail = h(
    'div',
    { class: 'panel feed-detail', 'aria-live': 'polite' },
    h('p', { class: 'muted' }, 'Select an event to see its JSON and deliveries.'),
  );
  const problem = h('div', {});
  const typePicker = h('select', { name: 'type' }, h('option', { value: '' }, 'any'));
  gql<{ eventTypes: Pick<EventCatalogueEntry, 'type'>[] }>(TYPES).then(
    (r) => typePicker.append(...r.eventTypes.map((t) => h('option', { value: t.type }, t.type))),
    (err) => fill(problem, errorBox(err)),
  );
  const form = h(
    'form',
    { class: 'filters', 'aria-label': 'Filters' },
    h('label', {}, 'Type', typePicker),
    h(
      'label',
      {},
      'Brand',
      h(
        'select',
        { name: 'brand' },
        h('option', { value: '' }, 'any'),
        (ctx.viewer?.brands ?? []).map((b) => h('option', { value: b.id }, b.slug)),
      ),
    ),
    h('label', {}, 'Subject type', h('input', { name: 'subjectType', placeholder: 'entity', size: 10 })),
    h('label', {}, 'Subject id', h('input', { name: 'subjectId', size: 14 })),
    h('label', {}, 'After seq', h('input', { name: 'after', inputmode: 'numeric', placeholder: 'newest', size: 7 })),
    h('button', { type: 'submit' }, 'Apply'),
  );

  const drawList = () =>
    fill(
      list,
      table(
        ['Seq', 'Type', 'Subject', 'Brand', 'At'],
        events.map((e) => ({
          id: e.id,
          cells: [e.seq, h('code', {}, e.type), `${e.subject.type}/${e.subject.id}`, brandSlug(e.brand), clock(e.createdAt)],
          onPick: () => open(e),
        })),
        'No events yet: new ones appear here as they commit.',
      ),
    );

  const open = (e: FeedEvent) => {
    selected = e.id;
    for (const tr of list.querySelectorAll('tr[data-id]'))
      tr.setAttribute('aria-selected', String(tr.getAttribute('data-id') === selected));
    fill(
      detail,
      h('h3', {}, `#${e.seq} ${e.type}`),
      h(
        'dl',
        {},
        h('dt', {}, 'Id'),
        h('dd', {}, h('code', {}, e.id)),
        h('dt', {}, 'Operation'),
        h('dd', {}, e.operation ? h('a', { href: `#/operations/${e.operation}` }, e.operation) : '–'),
      ),
      json(e),
      h('h3', {}, 'Deliveries per endpoint'),
      ctx.has('webhooks:read')
        ? deliveriesPanel(
            ctx,
            () =>
              gql<{ eventDeliveries: { edges: { node: DeliveryRow }[] } }>(DELIVERIES, { id: e.id }).then((r) =>
                r.eventDeliveries.edges.map((x) => x.node),
              ),
            'event',
          )
        : h('p', { class: 'muted' }, 'Hidden: needs scope webhooks:read.'),
    );
  };

  const receive = (e: FeedEvent) => {
    if (lastSeq !== null && e.seq <= lastSeq) return; // a replay overlapping what is shown
    lastSeq = e.seq;
    if (paused) {
      pending.push(e);
      pauseButton.textContent = `Resume (${pending.length} new)`;
      return;
    }
    events.unshift(e);
    events.length = Math.min(events.length, SHOWN);
    drawList();
  };

  pauseButton.addEventListener('click', () => {
    paused = !paused;
    pauseButton.setAttribute('aria-pressed', String(paused));
    if (!paused) {
      events.unshift(...pending.reverse());
      events.length = Math.min(events.length, SHOWN);
      pending = [];
      drawList();
    }
    pauseButton.textContent = paused ? 'Resume (0 new)' : 'Pause';
  });

  let run = 0; // the current subscription: a head read answering after a newer Apply, or after leaving, is dropped
  const subscribe = async () => {
    const mine = ++run;
    sub?.stop();
    sub = undefined;
    lastSeq = null;
    fill(problem);
    const f = formValues(form);
    events.length = 0;
    pending = [];
    drawList();
    setState('connecting');
    const filters = {
      types: f.type ? [f.type] : null,
      brands: f.brand ? [f.brand] : null,
      subjectTypes: f.subjectType ? [f.subjectType] : null,
      subjectId: f.subjectId || null,
    };
    let after = f.after || null;
    if (after === null) {
      try {
        const { head, recent } = await gql<{
          head: { edges: Pick<QueryEventsConnectionEdge, 'cursor'>[] };
          recent: { edges: { node: FeedEvent }[] };
        }>(HISTORY, { type: f.type || null, brands: filters.brands, subjectTypes: filters.subjectTypes, subjectId: filters.subjectId });
        if (mine !== run) return;
        const past = recent.edges.map((e) => e.node);
        // The two reads may straddle a commit: subscribe after whichever saw further, so nothing shows twice.
        after = String(Math.max(Number(head.edges[0]?.cursor ?? 0), past.at(-1)?.seq ?? 0));
        events.push(...past.reverse()); // newest first, as live events are shown
        drawList();
      } catch (err) {
        if (mine !== run) return;
        setState('ended');
        return void fill(problem, errorBox(err));
      }
    }
    lastSeq = /^\d+$/.test(after) ? Number(after) : null;
    sub = live<{ events: FeedEvent }>({
      query: SUBSCRIPTION,
      // A reconnect resumes after the last seq received; the first subscription starts where the form or the head says.
      variables: () => ({ ...filters, after: lastSeq === null ? after : String(lastSeq) }),
      onNext: (d) => receive(d.events),
      onError: (err) => fill(problem, errorBox(err)),
      onState: setState,
    });
  };
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    void subscribe();
  });

  fill(
    main,
    h('h2', {}, 'Live feed'),
    form,
    h('div', { class: 'toolbar' }, state, pauseButton),
    problem,
    h('div', { class: 'split' }, h('section', { 'aria-label': 'Events' }, list), h('section', { 'aria-label': 'Event detail' }, detail)),
  );
  void subscribe();
  return () => {
    run++;
    sub?.stop();
  };
};
