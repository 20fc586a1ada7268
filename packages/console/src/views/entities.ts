import { errorBox, gql } from '../api.ts';
import { type Child, fill, h, json, status, table, time } from '../dom.ts';
import type { View } from '../view.ts';
import type { Enrollment, EnrollmentTier, Entity, EntityEnrollment, EntityIdentity } from '../schema.ts';

type EntityRow = Pick<Entity, 'id' | 'claims' | 'createdAt'> & { identities: EntityIdentity[]; enrollments: EntityEnrollment[] };
type EnrollmentDetail = Pick<Enrollment, 'id' | 'program' | 'status' | 'standing' | 'evaluation' | 'evaluatedAt' | 'graceEndsAt'> & {
  tier: Pick<EnrollmentTier, 'name' | 'value'> | null;
};

export const LIST =
  '{ entities(first: 100) { edges { node { id claims createdAt identities { issuer externalUserId } enrollments { id program standing status } } } } }';
export const ENROLLMENT =
  'query($id: ID!) { enrollment(id: $id) { id program status standing evaluation evaluatedAt graceEndsAt tier { name value } } }';

/** Entities with their current claims and enrollments; an enrollment opens its standing and the evaluation that produced it. */
export const entitiesView: View = (main, ctx) => {
  const body = h('div', {}, h('p', { class: 'muted' }, 'Loading entities…'));
  const detail = h(
    'div',
    { class: 'panel', 'aria-live': 'polite', tabindex: -1 },
    h('p', { class: 'muted' }, 'Select an enrollment to see its evaluation.'),
  );
  /** The enrollment is drawn below the table (full width keeps ids and claims readable): brought into view and focused. */
  const show = (...children: Child[]) => {
    fill(detail, ...children);
    detail.scrollIntoView({ block: 'nearest' });
    detail.focus({ preventScroll: true });
  };
  const openEnrollment = (id: string) => {
    if (!ctx.has('enrollments:read')) return show(h('p', { class: 'muted' }, 'Hidden: needs scope enrollments:read.'));
    gql<{ enrollment: EnrollmentDetail }>(ENROLLMENT, { id }).then(
      ({ enrollment: e }) =>
        show(
          h('h3', {}, 'Enrollment ', h('code', {}, e.id)),
          h(
            'dl',
            {},
            h('dt', {}, 'Program'),
            h('dd', {}, e.program),
            h('dt', {}, 'Status'),
            h('dd', {}, status(e.status)),
            h('dt', {}, 'Standing'),
            h('dd', {}, status(e.standing)),
            h('dt', {}, 'Tier'),
            h('dd', {}, e.tier ? `${e.tier.name} (${e.tier.value})` : '–'),
            h('dt', {}, 'Evaluated'),
            h('dd', {}, time(e.evaluatedAt)),
            h('dt', {}, 'Grace ends'),
            h('dd', {}, time(e.graceEndsAt)),
          ),
          h('h3', {}, 'Evaluation'),
          json(e.evaluation),
        ),
      (err) => show(errorBox(err)),
    );
  };
  gql<{ entities: { edges: { node: EntityRow }[] } }>(LIST).then(
    (r) =>
      fill(
        body,
        table(
          ['Entity', 'Identities', 'Claims', 'Enrollments', 'Created'],
          r.entities.edges.map(({ node: e }) => ({
            id: e.id,
            cells: [
              h('code', {}, e.id),
              e.identities.map((i, n) => [n ? ', ' : '', h('code', {}, `${i.issuer}:${i.externalUserId}`)]),
              e.claims.length ? e.claims.map((c, i) => [i ? ', ' : '', h('code', {}, c)]) : '–',
              e.enrollments.length
                ? e.enrollments.map((en) =>
                    h(
                      'button',
                      { type: 'button', class: 'enrollment', onclick: () => openEnrollment(en.id) },
                      h('code', {}, en.program),
                      ' ',
                      status(en.standing),
                    ),
                  )
                : '–',
              time(e.createdAt),
            ],
          })),
          'No entities yet.',
        ),
      ),
    (err) => fill(body, errorBox(err)),
  );
  fill(
    main,
    h('h2', {}, 'Entities'),
    h('section', { 'aria-label': 'Entities' }, body),
    h('section', { 'aria-label': 'Enrollment', class: 'below' }, detail),
  );
};
