import { errorBox, rest } from '../api.ts';
import { fill, formValues, h, secretBox, status, table, time } from '../dom.ts';
import type { View } from '../main.ts';

/** A platform token's metadata as token management answers it (REST: this view uses the dashboard user token). */
interface TokenRow {
  id: string;
  name: string;
  token_prefix: string;
  scopes: string[];
  status: string;
  last_used_at: string | null;
  expires_at: string | null;
  revoked_at: string | null;
  created_at: string;
}

/** Platform tokens of the user token's organization: list, create and rotate (the secret shown once), revoke. */
export const tokensView: View = (main, ctx) => {
  const body = h('div', {}, h('p', { class: 'muted' }, 'Loading tokens…'));
  const out = h('div', {});
  const act = async (fn: () => Promise<unknown>) => {
    try {
      await fn();
    } catch (err) {
      fill(out, errorBox(err));
    }
    await load();
  };
  const issued = (label: string) => (r: { token: TokenRow; secret: string }) =>
    fill(out, secretBox(`${label} ${r.token.name} (${r.token.id})`, r.secret));
  const load = () =>
    rest<{ tokens: TokenRow[] }>('user', 'GET', '/platform/tokens').then(
      (r) =>
        fill(
          body,
          table(
            ['Name', 'Prefix', 'Status', 'Scopes', 'Last used', 'Expires', ''],
            r.tokens.map((t) => ({
              id: t.id,
              cells: [
                [t.name, t.id === ctx.viewer?.tokenId ? h('span', { class: 'chip' }, 'this console') : ''],
                h('code', {}, t.token_prefix),
                status(t.status),
                h('details', {}, h('summary', {}, `${t.scopes.length}`), t.scopes.join(', ')),
                time(t.last_used_at),
                time(t.expires_at),
                t.status === 'active'
                  ? h(
                      'span',
                      { class: 'toolbar' },
                      h(
                        'button',
                        {
                          type: 'button',
                          class: 'rotate',
                          onclick: () =>
                            act(() =>
                              rest<{ token: TokenRow; secret: string }>('user', 'POST', '/platform/tokens/rotate', { token_id: t.id }).then(
                                issued('Rotated'),
                              ),
                            ),
                        },
                        'Rotate',
                      ),
                      h(
                        'button',
                        {
                          type: 'button',
                          class: 'danger revoke',
                          onclick: () => act(() => rest('user', 'POST', '/platform/tokens/revoke', { token_id: t.id })),
                        },
                        'Revoke',
                      ),
                    )
                  : '',
              ],
            })),
            'No platform tokens.',
          ),
        ),
      (err) => fill(body, errorBox(err)),
    );
  const form = h(
    'form',
    { 'aria-label': 'New token' },
    h('label', {}, 'Name', h('input', { name: 'name', required: true, size: 16 })),
    h(
      'label',
      {},
      'Scopes (comma-separated)',
      h('input', { name: 'scopes', required: true, size: 30, placeholder: 'events:read, webhooks:read' }),
    ),
    h('label', {}, 'Expires (RFC 3339, optional)', h('input', { name: 'expires', size: 20 })),
    h('button', { type: 'submit', class: 'primary' }, 'Create token'),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const f = formValues(form);
    const scopes = (f.scopes ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    void act(() =>
      rest<{ token: TokenRow; secret: string }>('user', 'POST', '/platform/tokens/create', {
        name: f.name,
        scopes,
        ...(f.expires ? { expires_at: f.expires } : {}),
      }).then((r) => {
        issued('Created')(r);
        form.reset();
      }),
    );
  });
  fill(main, h('h2', {}, 'Platform tokens'), form, out, body);
  void load();
};
