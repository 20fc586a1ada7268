import { AssertionRevocation as RevocationShape, assertions } from '../../domain/assertion/assertion.ts';
import { Assertion as AssertionShape } from '../../domain/assertion/presenter.ts';
import { connectionAction, mutationAction, queryAction } from '../action.ts';
import { objectType } from '../derive.ts';
import { Node } from './node.ts';

/** Assertions in GraphQL: the same actions as REST, so a key replays identically on both. */
export const Assertion = objectType('Assertion', AssertionShape, {
  description: 'One assertion event (asrt_); a claim is the newest event for (entity, key)',
  interfaces: [Node],
});

const AssertionRevocation = objectType('AssertionRevocation', RevocationShape, { description: 'What revokeAssertion answers' });

connectionAction('assertions', assertions.list, {
  type: Assertion,
  description: "The subject's current claims, each as its newest event, ordered by key (scope assertions:read). Cursors are asrt_ ids.",
  // REST also takes the query string's "true"/"false".
  args: (arg) => ({ includeExpired: arg.boolean() }),
});

queryAction('assertion', assertions.retrieve, {
  type: Assertion,
  description: 'One assertion event by asrt_ id (scope assertions:read)',
});

mutationAction('createAssertion', assertions.create, {
  type: Assertion,
  description: 'State a claim; returns the new event, or the current one when nothing changed (scope assertions:write)',
});

mutationAction('revokeAssertion', assertions.revoke, {
  type: AssertionRevocation,
  description: 'Revoke a claim; revoked is false (and nothing appended) when it was already absent (scope assertions:write)',
});
