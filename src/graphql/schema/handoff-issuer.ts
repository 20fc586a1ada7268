import {
  DeletedHandoffIssuer as DeletedShape,
  HandoffIssuer as HandoffIssuerShape,
  handoffIssuers,
} from '../../domain/connect/handoff-issuer.ts';
import { connectionAction, mutationAction, queryAction } from '../action.ts';
import { objectType } from '../derive.ts';
import { Node } from './node.ts';

/** Signed-handoff issuers of the selected brand. The algorithm keeps its JOSE spelling (HS256, EdDSA): a String. */
export const HandoffIssuer = objectType('HandoffIssuer', HandoffIssuerShape, {
  description: "A brand's signed-handoff issuer (iss_): the iss claim of the handoff tokens it signs",
  interfaces: [Node],
});

const DeletedHandoffIssuer = objectType('DeletedHandoffIssuer', DeletedShape, { description: 'What deleteHandoffIssuer answers' });

connectionAction('handoffIssuers', handoffIssuers.list, {
  type: HandoffIssuer,
  description: "The brand's handoff issuers, newest first (scope handoff:read). Cursors are iss_ ids.",
});

queryAction('handoffIssuer', handoffIssuers.retrieve, {
  description: 'One handoff issuer of the brand by iss_ id (scope handoff:read)',
  type: HandoffIssuer,
});

mutationAction('createHandoffIssuer', handoffIssuers.create, {
  description: 'Register a handoff issuer: HS256 (secret generated when omitted, shown once) or EdDSA (publicKey) (scope handoff:write)',
  type: HandoffIssuer,
});

mutationAction('rotateHandoffIssuer', handoffIssuers.rotate, {
  description: 'Install a new secret or public key; the previous one verifies for 24 h (scope handoff:write)',
  type: HandoffIssuer,
});

mutationAction('deleteHandoffIssuer', handoffIssuers.delete, {
  description: 'Delete a handoff issuer (scope handoff:write)',
  type: DeletedHandoffIssuer,
});
