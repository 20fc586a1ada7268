import { builder } from '../builder.ts';
import './node.ts';
import './brand.ts';
import './viewer.ts';
import './unit.ts';
import './event.ts';
import './webhook-endpoint.ts';
import './assertion.ts';
import './program.ts';
import './enrollment.ts';
import './webhook-delivery.ts';
import './operation.ts';
import './distribution.ts';
import './performance.ts';
import './relationship.ts';
import './connection.ts';
import './connect-config.ts';

export const schema = builder.toSchema({ sortSchema: true });
