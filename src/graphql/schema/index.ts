import { type GraphQLSchema, isObjectType } from 'graphql';
import { builder } from '../builder.ts';
import './node.ts';
import './brand.ts';
import './viewer.ts';
import './unit.ts';
import './event.ts';
import './event-type.ts';
import './webhook-endpoint.ts';
import './assertion.ts';
import './program.ts';
import './enrollment.ts';
import './webhook-delivery.ts';
import './event-destination.ts';
import './operation.ts';
import './distribution.ts';
import './performance.ts';
import './payout.ts';
import './relationship.ts';
import './connection.ts';
import './connect-config.ts';
import './handoff-issuer.ts';

export const schema = inlineRelayReads(builder.toSchema({ sortSchema: true }));

/**
 * The Relay plugin resolves a connection's `edges` and an edge's `node` with a read of the property of the same
 * name. As resolvers, compiled execution calls each one, with its info and error handling, for every edge of every
 * page; where no plugin wrapped them they are the default resolver, so they are dropped and the property is read
 * inline (as `objectType` fields are: src/graphql/derive.ts).
 */
function inlineRelayReads(built: GraphQLSchema): GraphQLSchema {
  for (const type of Object.values(built.getTypeMap())) {
    if (!isObjectType(type)) continue;
    for (const [name, field] of Object.entries(type.getFields())) {
      if (name !== 'edges' && name !== 'node') continue;
      const read = String(field.resolve).replace(/\s/g, '') === `(parent)=>parent.${name}`;
      if (read && field.extensions.pothosResolveWrapped === false) field.resolve = undefined;
    }
  }
  return built;
}
