import type { Deps } from '../../src/domain/context.ts';
import { handoffIssuers } from '../../src/domain/connect/handoff-issuer.ts';
import type { RouteDef } from '../http/route.ts';
import { actionRoute } from './answer.ts';

/** Signed-handoff issuers of the selected brand. */
export function handoffIssuerRoutes(deps: Deps): RouteDef[] {
  const common = { tag: 'Handoff issuers', errors: [400, 401, 403, 404, 409, 429, 503] };
  return [
    actionRoute(deps, handoffIssuers.create, {
      ...common,
      method: 'POST',
      path: '/handoff/issuers',
      operationId: 'createHandoffIssuer',
      summary:
        'Register a handoff issuer: HS256 (a secret, generated when omitted, shown in this answer only) or EdDSA (an Ed25519 public key, JWK or PEM)',
      description: 'The issuer (with its secret, for HS256)',
    }),
    actionRoute(deps, handoffIssuers.list, {
      ...common,
      method: 'GET',
      path: '/handoff/issuers',
      operationId: 'listHandoffIssuers',
      summary: "The brand's handoff issuers, newest first (never their secrets)",
      description: 'A page of issuers',
    }),
    actionRoute(deps, handoffIssuers.retrieve, {
      ...common,
      method: 'GET',
      path: '/handoff/issuers/:id',
      operationId: 'retrieveHandoffIssuer',
      summary: 'One handoff issuer of the brand (never its secret)',
      description: 'The issuer',
    }),
    actionRoute(deps, handoffIssuers.rotate, {
      ...common,
      method: 'POST',
      path: '/handoff/issuers/:id/rotate',
      operationId: 'rotateHandoffIssuer',
      summary:
        'Install a new secret (HS256: generated when omitted, shown in this answer only) or public key (EdDSA); the previous one verifies for 24 h',
      description: 'The issuer (with its new secret, for HS256)',
    }),
    actionRoute(deps, handoffIssuers.delete, {
      ...common,
      method: 'DELETE',
      path: '/handoff/issuers/:id',
      operationId: 'deleteHandoffIssuer',
      summary: 'Delete a handoff issuer: its tokens no longer verify',
      description: 'Deleted',
    }),
  ];
}
