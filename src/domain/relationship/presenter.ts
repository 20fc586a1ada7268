import { z } from 'zod';
import type { Relationship as RelationshipRow } from '../../db/generated/client.ts';
import { RELATIONSHIP_STATUSES, type RelationshipStatus } from './states.ts';
import { isoTime } from '../shape.ts';

export const Relationship = z.object({
  id: z.string().describe('prefix rel_'),
  object: z.literal('relationship'),
  brand: z.string(),
  entity: z.string().describe('prefix ent_'),
  status: z.enum(RELATIONSHIP_STATUSES),
  ended_at: isoTime.nullable(),
  livemode: z.boolean(),
  created_at: isoTime,
  updated_at: isoTime,
});
export type PublicRelationship = z.output<typeof Relationship>;

export const presentRelationship = (r: RelationshipRow): PublicRelationship => ({
  id: r.id,
  object: 'relationship',
  brand: r.brandId,
  entity: r.entityId,
  status: r.status as RelationshipStatus,
  ended_at: r.endedAt?.toISOString() ?? null,
  livemode: true,
  created_at: r.createdAt.toISOString(),
  updated_at: r.updatedAt.toISOString(),
});
