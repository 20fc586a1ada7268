import { errorBox, rest } from '../api.ts';
import { fill, formValues, h, secretBox, status, table, time } from '../dom.ts';
import type { View } from '../view.ts';

/** A platform token's metadata as token management answers it (REST: this view uses the dashboard user token). */
interface TokenRow {
  id: string;
  name: string;
  /** secret (`sk_…`, scoped) or publishable (`pk_live_…`, one brand, partner connect only). */
  kind: 'secret' | 'publishable';
  /** The brand a publishable key is bound to; null for a secret key. */
  brand: string | null;
  token_prefix: string;
  scopes: string[];
  status: string;
  last_used_at: string | null;
  expires_at: string | null;
  revoked_at: string | null;
  created_at: string;
}

/**
 * Platform tokens of the user token's organization: list (kind and, for a publishable key, its brand), create a secret
 * key with scopes or a publishable key for a brand, rotate (the secret shown once), revoke. Every action ends with its
 * outcome (the new secret, a notice or the error) focused, so a keyboard or screen-reader user is not left on a button
 * the refreshed table has replaced.
 */
export const tokensView: View = (main, ctx) => {
  const body = h('div', {}, h('p', { class: 'muted' }, 'Loading tokens…'));
  const out = h('div', { class: 'outcome', tabindex: -1, 'aria-live': 'polite' });
  const act = async (fn: () => Promise<HTMLElement>) => {
    try {
      fill(out, await fn());
    } catch (err) {
      fill(out, errorBox(err));
    }
    // In the same turn as the outcome appears: the refreshed table then replaces rows, never the focused outcome.
    out.focus();
    await load();
  };
  const issued = (label: string) => (r: { token: TokenRow; secret: string }) =>
    secretBox(`${label} ${r.token.name} (${r.token.id})`, r.secret);
  const kindOf = (t: TokenRow) =>
    t.kind === 'publishable' ? ['publishable', h('div', {}, h('code', { class: 'wrap', title: 'brand' }, t.brand ?? ''))] : 'secret';
  const load = () =>
    rest<{ tokens: TokenRow[] }>('user', 'GET', '/platform/tokens').then(
      (r) =>
        fill(
          body,
          table(
            ['Name', 'Kind', 'Prefix', 'Status', 'Scopes', 'Last used', 'Expires', ''],
            r.tokens.map((t) => ({
              id: t.id,
              cells: [
                [t.name, t.id === ctx.viewer?.tokenId ? h('span', { class: 'chip' }, 'this console') : ''],
                h('span', { class: 'kind' }, kindOf(t)),
                h('code', {}, t.token_prefix),
                status(t.status),
                t.kind === 'publishable'
                  ? h('span', { class: 'muted', title: 'A publishable key holds no scopes: partner connect only' }, '–')
                  : h('details', {}, h('summary', {}, `${t.scopes.length}`), t.scopes.join(', ')),
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
                          onclick: () =>
                            act(() =>
                              rest('user', 'POST', '/platform/tokens/revoke', { token_id: t.id }).then(() =>
                                h('p', { class: 'notice', role: 'status' }, `Revoked ${t.name} (${t.id}).`),
                              ),
                            ),
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
  const scopesInput = h('input', {
    name: 'scopes',
    required: true,
    size: 30,
    placeholder: 'events:read, webhooks:read',
  });
  const brandInput = h('input', { name: 'brand', size: 16, placeholder: 'brand id or slug', disabled: true });
  const kindSelect = h(
    'select',
    { name: 'kind' },
    h('option', { value: 'secret' }, 'secret (scoped)'),
    h('option', { value: 'publishable' }, 'publishable (partner connect)'),
  );
  // A secret key takes scopes, a publishable key a brand: only the field its kind takes is enabled and required.
  kindSelect.addEventListener('change', () => {
    const publishable = kindSelect.value === 'publishable';
    scopesInput.disabled = publishable;
    scopesInput.required = !publishable;
    brandInput.disabled = !publishable;
    brandInput.required = publishable;
  });
  const form = h(
    'form',
    { 'aria-label': 'New token' },
    h('label', {}, 'Name', h('input', { name: 'name', required: true, size: 16 })),
    h('label', {}, 'Kind', kindSelect),
    h('label', {}, 'Scopes (comma-separated)', scopesInput),
    h('label', {}, 'Brand (publishable keys)', brandInput),
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
    const expires = f.expires ? { expires_at: f.expires } : {};
    void act(() =>
      rest<{ token: TokenRow; secret: string }>(
        'user',
        'POST',
        '/platform/tokens/create',
        f.kind === 'publishable' ? { name: f.name, kind: 'publishable', brand: f.brand, ...expires } : { name: f.name, scopes, ...expires },
      ).then((r) => {
        form.reset();
        kindSelect.dispatchEvent(new Event('change'));
        return issued('Created')(r);
      }),
    );
  });
  fill(main, h('h2', {}, 'Platform tokens'), form, out, body);
  void load();
};
