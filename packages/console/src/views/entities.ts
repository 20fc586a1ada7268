import { errorBox, gql } from '../api.ts';
import { fill, h, json, status, table, time } from '../dom.ts';
import type { View } from '../main.ts';
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
    { class: 'panel', 'aria-live': 'polite' },
    h('p', { class: 'muted' }, 'Select an enrollment to see its evaluation.'),
  );
  const openEnrollment = (id: string) => {
    if (!ctx.has('enrollments:read')) return fill(detail, h('p', { class: 'muted' }, 'Hidden: needs scope enrollments:read.'));
    gql<{ enrollment: EnrollmentDetail }>(ENROLLMENT, { id }).then(
      ({ enrollment: e }) =>
        fill(
          detail,
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
      (err) => fill(detail, errorBox(err)),
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
              e.identities.map((i) => `${i.issuer}:${i.externalUserId}`).join(', '),
              e.claims.join(', ') || '–',
              e.enrollments.length
                ? e.enrollments.map((en) =>
                    h(
                      'button',
                      { type: 'button', class: 'enrollment', onclick: () => openEnrollment(en.id) },
                      `${en.program} `,
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
    h('div', { class: 'split' }, h('section', { 'aria-label': 'Entities' }, body), h('section', { 'aria-label': 'Enrollment' }, detail)),
  );
};
