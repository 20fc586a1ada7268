import { errorBox, gql } from '../api.ts';
import { fill, h, json, status, table, time } from '../dom.ts';
import { live } from '../live.ts';
import type { Ctx, View } from '../view.ts';
import type { EventSubject, Operation } from '../schema.ts';

type Op = Pick<
  Operation,
  | 'id'
  | 'kind'
  | 'status'
  | 'waitingReason'
  | 'attempts'
  | 'maxAttempts'
  | 'error'
  | 'progress'
  | 'result'
  | 'targetOperationId'
  | 'parentOperationId'
  | 'createdAt'
  | 'completedAt'
> & { subject: EventSubject };

export const FIELDS =
  'id kind status waitingReason attempts maxAttempts error progress result targetOperationId parentOperationId createdAt completedAt subject { type id }';
export const LIST = `query($status: OperationStatus, $subjectId: String) { operations(first: 100, status: $status, subjectId: $subjectId) { edges { node { ${FIELDS} } } } }`;
/** An operation's fan-out children and the cancels targeting it, each read on its own index. */
export const RELATED = `query($id: String!) {
  children: operations(first: 100, parentOperationId: $id) { edges { node { ${FIELDS} } } }
  cancels: operations(first: 100, targetOperationId: $id) { edges { node { ${FIELDS} } } } }`;
export const WATCH = `subscription($id: ID!) { operation(id: $id) { ${FIELDS} } }`;
export const CANCEL = 'mutation($id: ID!) { cancelDistribution(id: $id) { operation { id } } }';
export const CANCEL_REPLAY = 'mutation($id: ID!) { cancelWebhookEndpointReplay(id: $id) { id } }';

/** What a live operation's cancel button does, when the token may: the cancel of its distribution or its replay. */
function cancelOf(ctx: Ctx, o: Op): { label: string; run: () => Promise<string> } | null {
  if (TERMINAL.has(o.status)) return null;
  if (ctx.has('distributions:write') && o.subject.type === 'distribution' && o.kind !== 'distribution.cancel')
    return {
      label: 'Cancel distribution',
      run: () =>
        gql<{ cancelDistribution: { operation: { id: string } } }>(CANCEL, { id: o.subject.id }).then(
          (r) => r.cancelDistribution.operation.id,
        ),
    };
  if (ctx.has('webhooks:write') && o.kind === 'webhook_endpoint.replay')
    return {
      label: 'Cancel replay',
      run: () =>
        gql<{ cancelWebhookEndpointReplay: { id: string } }>(CANCEL_REPLAY, { id: o.subject.id }).then(
          (r) => r.cancelWebhookEndpointReplay.id,
        ),
    };
  return null;
}
export const TERMINAL = new Set(['SUCCEEDED', 'PARTIAL', 'FAILED', 'CANCELED']);

const list = (vars: Record<string, unknown>) =>
  gql<{ operations: { edges: { node: Op }[] } }>(LIST, vars).then((r) => r.operations.edges.map((e) => e.node));

const opLink = (id: string | null) => (id ? h('a', { href: `#/operations/${id}` }, id) : '–');

const rows = (ops: Op[]) =>
  ops.map((o) => ({
    id: o.id,
    onPick: () => void (location.hash = `#/operations/${o.id}`),
    cells: [
      h('a', { href: `#/operations/${o.id}` }, o.kind),
      status(o.status),
      o.waitingReason ?? '',
      `${o.subject.type}/${o.subject.id}`,
      time(o.createdAt),
    ],
  }));

export const operationsView: View = (main, ctx, [id]) => (id ? detailView(main, ctx, id) : listView(main));

function listView(main: HTMLElement): void {
  const body = h('div', {}, h('p', { class: 'muted' }, 'Loading operations…'));
  const filter = h(
    'select',
    { 'aria-label': 'Status' },
    h('option', { value: '' }, 'any status'),
    ['PENDING', 'RUNNING', 'WAITING', 'SUCCEEDED', 'PARTIAL', 'FAILED', 'CANCELED'].map((s) => h('option', { value: s }, s)),
  );
  const load = () =>
    list({ status: filter.value || null }).then(
      (ops) => fill(body, table(['Kind', 'Status', 'Waiting reason', 'Subject', 'Created'], rows(ops), 'No operations.')),
      (err) => fill(body, errorBox(err)),
    );
  filter.addEventListener('change', load);
  fill(
    main,
    h('h2', {}, 'Operations'),
    h('div', { class: 'toolbar' }, filter, h('button', { type: 'button', onclick: load }, 'Refresh')),
    body,
  );
  void load();
}

/** One operation, live: the operation subscription pushes each change until it is terminal; its children and the cancels targeting it are read again on each. */
function detailView(main: HTMLElement, ctx: Ctx, id: string): () => void {
  const info = h('div', { 'aria-live': 'polite' }, h('p', { class: 'muted' }, 'Loading…'));
  const related = h('div', {});
  const out = h('div', {});
  const state = h('span', { class: 'chip', role: 'status' }, 'connecting');
  const draw = (o: Op) => {
    const cancel = cancelOf(ctx, o);
    fill(
      info,
      h(
        'dl',
        {},
        h('dt', {}, 'Kind'),
        h('dd', {}, o.kind),
        h('dt', {}, 'Status'),
        h('dd', { class: 'op-status' }, status(o.status), o.waitingReason ? ` (${o.waitingReason})` : ''),
        h('dt', {}, 'Subject'),
        h('dd', {}, `${o.subject.type}/${o.subject.id}`),
        h('dt', {}, 'Attempts'),
        h('dd', {}, `${o.attempts} of ${o.maxAttempts}`),
        h('dt', {}, 'Parent'),
        h('dd', {}, opLink(o.parentOperationId)),
        h('dt', {}, 'Cancels'),
        h('dd', {}, opLink(o.targetOperationId)),
        h('dt', {}, 'Created'),
        h('dd', {}, time(o.createdAt)),
        h('dt', {}, 'Completed'),
        h('dd', {}, time(o.completedAt)),
      ),
      cancel
        ? h(
            'p',
            {},
            h(
              'button',
              {
                type: 'button',
                class: 'danger',
                onclick: async () => {
                  try {
                    fill(out, h('p', { class: 'notice' }, 'Cancel requested: ', opLink(await cancel.run())));
                  } catch (err) {
                    fill(out, errorBox(err));
                  }
                },
              },
              cancel.label,
            ),
          )
        : null,
      h('h3', {}, 'Progress'),
      json(o.progress),
      o.error ? [h('h3', {}, 'Error'), json(o.error)] : null,
      h('h3', {}, 'Result'),
      json(o.result),
    );
    // Its children (fan-out) and the cancels that target it, read again on each change.
    type Ops = { edges: { node: Op }[] };
    void gql<{ children: Ops; cancels: Ops }>(RELATED, { id: o.id }).then(
      (r) => {
        const nodes = (c: Ops) => c.edges.map((e) => e.node);
        fill(
          related,
          h('h3', {}, 'Children'),
          table(['Kind', 'Status', 'Waiting reason', 'Subject', 'Created'], rows(nodes(r.children)), 'No child operations.'),
          h('h3', {}, 'Cancels targeting it'),
          table(['Kind', 'Status', 'Waiting reason', 'Subject', 'Created'], rows(nodes(r.cancels)), 'None.'),
        );
      },
      (err) => fill(related, errorBox(err)),
    );
  };
  const sub = live<{ operation: Op }>({
    query: WATCH,
    variables: () => ({ id }),
    onNext: (d) => draw(d.operation),
    onError: (err) => fill(out, errorBox(err)),
    onState: (s) => void (state.textContent = s === 'ended' ? 'final' : s),
  });
  fill(
    main,
    h('p', {}, h('a', { href: '#/operations' }, '← Operations')),
    h('h2', {}, 'Operation ', h('code', {}, id), ' ', state),
    out,
    info,
    related,
  );
  return () => sub.stop();
}
