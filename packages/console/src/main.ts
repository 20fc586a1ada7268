import { type ApiError, errorBox, gql, KIND_LABEL, type Kind, kindOf, rest, session, whenCredentialEnds } from './api.ts';
import { fill, formValues, h } from './dom.ts';
import { type SignedViewer, VIEWER } from './viewer.ts';
import { entitiesView } from './views/entities.ts';
import { feedView } from './views/feed.ts';
import { operationsView } from './views/operations.ts';
import { operatorView } from './views/operator.ts';
import { tokensView } from './views/tokens.ts';
import { webhooksView } from './views/webhooks.ts';

export interface Ctx {
  viewer: SignedViewer | null;
  /** Whether the platform token holds `scope`. */
  has(scope: string): boolean;
  signedIn(kind: Kind): boolean;
}

/** A view draws into `main`; what it returns is called when it is left (to stop its subscriptions). */
export type View = (main: HTMLElement, ctx: Ctx, params: string[]) => void | (() => void);

type Need = { scope: string } | { kind: Exclude<Kind, 'platform'> };
const VIEWS: { path: string; label: string; need: Need; view: View }[] = [
  { path: 'feed', label: 'Live feed', need: { scope: 'events:read' }, view: feedView },
  { path: 'webhooks', label: 'Webhook endpoints', need: { scope: 'webhooks:read' }, view: webhooksView },
  { path: 'operations', label: 'Operations', need: { scope: 'operations:read' }, view: operationsView },
  { path: 'entities', label: 'Entities', need: { scope: 'entities:read' }, view: entitiesView },
  { path: 'tokens', label: 'Tokens', need: { kind: 'user' }, view: tokensView },
  { path: 'operator', label: 'Operator', need: { kind: 'operator' }, view: operatorView },
];

let viewer: SignedViewer | null = null;
let signedOut: ApiError | null = null;
let leave: (() => void) | undefined;

const ctx: Ctx = {
  get viewer() {
    return viewer;
  },
  // The viewer's scopes include the implicit operations:read.
  has: (scope) => !!viewer && viewer.scopes.includes(scope),
  signedIn: (kind) => (kind === 'platform' ? !!viewer : !!session.get(kind)),
};

const allowed = (need: Need) => ('scope' in need ? ctx.has(need.scope) : ctx.signedIn(need.kind));
const why = (need: Need) =>
  'scope' in need
    ? viewer
      ? `needs scope ${need.scope}`
      : 'sign in with a platform token'
    : `sign in with the ${KIND_LABEL[need.kind].toLowerCase()}`;

function header(): HTMLElement[] {
  const chips = (['platform', 'user', 'operator'] as const)
    .filter((k) => ctx.signedIn(k))
    .map((k) =>
      h(
        'span',
        { class: 'chip signed-in', 'data-kind': k },
        KIND_LABEL[k],
        k === 'platform' && viewer ? ` · ${viewer.organization.slug} · ${viewer.scopes.length} scopes` : '',
        ' ',
        h(
          'button',
          { type: 'button', class: 'sign-out', 'aria-label': `Sign out the ${KIND_LABEL[k].toLowerCase()}`, onclick: () => signOut(k) },
          'Sign out',
        ),
      ),
    );
  return [h('h1', {}, 'Platform console'), ...chips];
}

function nav(current: string): HTMLElement {
  const link = (path: string, label: string) =>
    h('li', {}, h('a', { href: `#/${path}`, 'aria-current': current === path ? 'page' : null }, label));
  const hidden = VIEWS.filter((v) => !allowed(v.need));
  return h(
    'div',
    {},
    h(
      'ul',
      {},
      VIEWS.filter((v) => allowed(v.need)).map((v) => link(v.path, v.label)),
      link('signin', 'Sign in'),
    ),
    hidden.length
      ? h(
          'div',
          { class: 'hidden-views' },
          h('p', {}, 'Hidden:'),
          h(
            'ul',
            {},
            hidden.map((v) => h('li', {}, `${v.label} (${why(v.need)})`)),
          ),
        )
      : null,
  );
}

function signInView(main: HTMLElement): void {
  const out = h('div', {});
  const form = h(
    'form',
    { class: 'signin', 'aria-label': 'Sign in' },
    h(
      'label',
      {},
      'Token (platform sk_…, dashboard user ut_…, or operator)',
      h('input', { name: 'token', id: 'token', type: 'password', autocomplete: 'off', required: true }),
    ),
    h('button', { type: 'submit', class: 'primary' }, 'Sign in'),
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const token = formValues(form).token ?? '';
    try {
      await signIn(token);
      // The first view this token opens.
      const kind = kindOf(token);
      const first = VIEWS.find((v) => allowed(v.need) && ('scope' in v.need ? kind === 'platform' : v.need.kind === kind));
      location.hash = `#/${first?.path ?? 'signin'}`;
    } catch (err) {
      fill(out, errorBox(err));
    }
  });
  const scopes = viewer
    ? h(
        'details',
        { class: 'scopes' },
        h('summary', {}, `Platform token ${viewer.tokenId}: ${viewer.scopes.length} scopes`),
        h('p', {}, viewer.scopes.join(', ')),
      )
    : null;
  fill(
    main,
    h('h2', {}, 'Sign in'),
    signedOut ? h('div', { class: 'signed-out' }, h('p', {}, 'Signed out.'), errorBox(signedOut)) : null,
    h(
      'p',
      { class: 'muted' },
      'The token stays in this tab (sessionStorage) and is sent only to this server. Sign in with several kinds to see every view.',
    ),
    form,
    out,
    scopes,
  );
  form.querySelector('input')?.focus();
}

async function signIn(token: string): Promise<void> {
  const kind = kindOf(token);
  const previous = session.get(kind);
  session.set(kind, token);
  try {
    if (kind === 'platform') viewer = (await gql<{ viewer: SignedViewer }>(VIEWER)).viewer;
    else await rest(kind, 'GET', kind === 'user' ? '/platform/tokens' : '/operator/kill_switch');
    signedOut = null;
  } catch (err) {
    if (previous) session.set(kind, previous);
    else session.clear(kind);
    if (kind === 'platform' && !previous) viewer = null;
    throw err;
  }
}

function signOut(kind: Kind, err: ApiError | null = null): void {
  session.clear(kind);
  if (kind === 'platform') viewer = null;
  signedOut = err;
  if (location.hash === '#/signin') route();
  else location.hash = '#/signin';
}

whenCredentialEnds((kind, err) => signOut(kind, err));

function route(): void {
  leave?.();
  leave = undefined;
  const [path = '', ...params] = location.hash.replace(/^#\/?/, '').split('/');
  const main = document.getElementById('main')!;
  const view = VIEWS.find((v) => v.path === path);
  const target = view && allowed(view.need) ? view : undefined;
  const current = target ? target.path : 'signin';
  fill(document.getElementById('top')!, ...header());
  fill(document.getElementById('nav')!, nav(current));
  if (!target) {
    signInView(main);
    return;
  }
  leave = target.view(main, ctx, params.map(decodeURIComponent)) ?? undefined;
}

async function start(): Promise<void> {
  const token = session.get('platform');
  if (token) {
    try {
      viewer = (await gql<{ viewer: SignedViewer }>(VIEWER)).viewer;
    } catch {
      viewer = null; // signed out by the answer, or the API is away: the sign-in page says which
    }
  }
  window.addEventListener('hashchange', route);
  if (!location.hash) location.hash = viewer ? '#/feed' : '#/signin';
  route();
}

void start();
