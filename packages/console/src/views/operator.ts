import { errorBox, rest } from '../api.ts';
import { fill, formValues, h, table, time } from '../dom.ts';
import type { View } from '../view.ts';

interface KillSwitch {
  engaged: boolean;
  updated_at: string | null;
}
interface Org {
  id: string;
  slug: string;
  name: string;
  created_at: string;
  brands: { id: string; slug: string }[];
}

/** The operator's views: the kill switch (a change asks for confirmation), organizations, a brand wallet's top-up. */
export const operatorView: View = (main) => {
  const kill = h('div', {});
  const orgs = h('div', {}, h('p', { class: 'muted' }, 'Loading organizations…'));
  const out = h('div', {});
  // By keyboard too: the confirmation takes the focus (on Cancel, the safe answer; Escape cancels), and the focus
  // returns to the switch's button once it is answered.
  const drawKill = (k: KillSwitch, refocus = false) => {
    const change = h('button', { type: 'button', class: k.engaged ? '' : 'danger' }, k.engaged ? 'Disengage…' : 'Engage…');
    change.addEventListener('click', () => {
      const cancel = h('button', { type: 'button', onclick: () => drawKill(k, true) }, 'Cancel');
      const dialog = h(
        'div',
        { class: 'error', role: 'alertdialog', 'aria-label': 'Confirm' },
        h(
          'p',
          {},
          k.engaged
            ? 'Reopen Surface B and GraphQL to every organization?'
            : 'Every Surface B and GraphQL request of every organization will answer 503 developer_access_paused, and open streams end. Engage?',
        ),
        h(
          'button',
          {
            type: 'button',
            class: 'danger confirm',
            onclick: () =>
              rest<KillSwitch>('operator', 'POST', '/operator/kill_switch', { engaged: !k.engaged }).then(
                (next) => drawKill(next, true),
                (err) => fill(kill, errorBox(err)),
              ),
          },
          k.engaged ? 'Yes, disengage' : 'Yes, engage',
        ),
        ' ',
        cancel,
      );
      dialog.addEventListener('keydown', (e) => {
        if (e.key === 'Escape') drawKill(k, true);
      });
      fill(kill, dialog);
      cancel.focus();
    });
    fill(
      kill,
      h(
        'p',
        { class: 'kill-state' },
        'Kill switch: ',
        h('strong', { class: k.engaged ? 'status-FAILED' : 'status-SUCCEEDED' }, k.engaged ? 'engaged' : 'off'),
        ' since ',
        time(k.updated_at),
        ' ',
      ),
      change,
    );
    if (refocus) change.focus();
  };
  const topUp = h(
    'form',
    { 'aria-label': 'Wallet top-up' },
    h('label', {}, 'Brand (brand_ id or org.brand)', h('input', { name: 'brand', required: true, size: 24 })),
    h('label', {}, 'Amount (minor units)', h('input', { name: 'amount', required: true, inputmode: 'numeric', size: 8 })),
    h('button', { type: 'submit', class: 'primary' }, 'Top up'),
  );
  topUp.addEventListener('submit', (e) => {
    e.preventDefault();
    const f = formValues(topUp);
    rest<{ brand: string; balance: number }>('operator', 'POST', `/operator/brands/${encodeURIComponent(f.brand ?? '')}/wallet/top_up`, {
      amount: Number(f.amount),
    }).then(
      (w) => fill(out, h('p', { class: 'notice' }, `Wallet of ${w.brand}: balance ${w.balance}`)),
      (err) => fill(out, errorBox(err)),
    );
  });
  fill(main, h('h2', {}, 'Operator'), kill, h('h3', {}, 'Wallet top-up'), topUp, out, h('h3', {}, 'Organizations'), orgs);
  rest<KillSwitch>('operator', 'GET', '/operator/kill_switch').then(
    (k) => drawKill(k),
    (err) => fill(kill, errorBox(err)),
  );
  rest<{ data: Org[] }>('operator', 'GET', '/operator/organizations?limit=100').then(
    (r) =>
      fill(
        orgs,
        table(
          ['Slug', 'Name', 'Id', 'Brands', 'Created'],
          r.data.map((o) => ({
            id: o.id,
            cells: [o.slug, o.name, h('code', {}, o.id), o.brands.map((b) => `${o.slug}.${b.slug}`).join(', '), time(o.created_at)],
          })),
          'No organizations.',
        ),
      ),
    (err) => fill(orgs, errorBox(err)),
  );
};
