import { builder } from '../builder.ts';
import './viewer.ts';
import './unit.ts';

export const schema = builder.toSchema({ sortSchema: true });
