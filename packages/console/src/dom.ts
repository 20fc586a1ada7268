/** Builds DOM nodes from data with textContent and properties only (never innerHTML), so no value can inject markup. */
export type Child = Node | string | number | null | undefined | false | Child[];
type Attrs = Record<string, string | number | boolean | null | undefined | EventListener>;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (typeof v === 'function') el.addEventListener(k.slice(2).toLowerCase(), v);
    else if (v === true) el.setAttribute(k, '');
    else el.setAttribute(k, String(v));
  }
  append(el, children);
  return el;
}

function append(el: Node, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.appendChild(typeof c === 'object' ? c : document.createTextNode(String(c)));
  }
}

/** Replaces an element's children. */
export function fill(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  append(el, children);
}

export const json = (v: unknown) => h('pre', {}, h('code', {}, JSON.stringify(v, null, 2)));

export const time = (iso: string | null | undefined) =>
  iso ? h('time', { datetime: iso, title: iso }, iso.replace('T', ' ').slice(0, 19)) : '–';

/** The time of day only (the full instant in its title), where a narrow column has no room for the date. */
export const clock = (iso: string | null | undefined) => (iso ? h('time', { datetime: iso, title: iso }, iso.slice(11, 19)) : '–');

export const status = (s: string | null | undefined) => (s ? h('span', { class: `status-${s}` }, s) : '–');

/** A table whose rows are given as cells; `onPick` makes a row selectable by click and Enter. */
export function table(head: string[], rows: { cells: Child[]; onPick?: () => void; id?: string }[], empty: string): HTMLElement {
  if (rows.length === 0) return h('p', { class: 'muted empty' }, empty);
  return h(
    'div',
    { class: 'scroll' },
    h(
      'table',
      {},
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          head.map((c) => h('th', { scope: 'col' }, c)),
        ),
      ),
      h(
        'tbody',
        {},
        rows.map((r) => {
          const tr = h(
            'tr',
            { 'data-id': r.id },
            r.cells.map((c) => h('td', {}, c)),
          );
          if (r.onPick) {
            const pick = r.onPick;
            tr.className = 'selectable';
            tr.tabIndex = 0;
            tr.addEventListener('click', pick);
            tr.addEventListener('keydown', (e) => {
              if (e.key === 'Enter' || e.key === ' ') {
                e.preventDefault();
                pick();
              }
            });
          }
          return tr;
        }),
      ),
    ),
  );
}

/** A secret shown once, with a copy button. */
export function secretBox(label: string, secret: string): HTMLElement {
  const note = h('span', { class: 'muted', role: 'status' }, 'Shown once: copy it now.');
  return h(
    'div',
    { class: 'notice secret' },
    h('strong', {}, label),
    h('code', { class: 'secret-value' }, secret),
    h(
      'button',
      {
        type: 'button',
        onclick: () =>
          navigator.clipboard.writeText(secret).then(
            () => void (note.textContent = 'Copied.'),
            () => void (note.textContent = 'Copy failed: select the text and copy it.'),
          ),
      },
      'Copy',
    ),
    note,
  );
}

/** Reads a form's named fields as strings. */
export function formValues(form: HTMLFormElement): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of new FormData(form)) out[k] = String(v).trim();
  return out;
}
