import { z } from 'zod';
import { capability, read } from '../action/action.ts';
import { listOf, wholeList } from '../action/list.ts';
import { missing } from '../errors.ts';
import { EVENT_TYPE_DEFINITIONS, eventDataJsonSchema } from './payload.ts';
import { PUBLIC_EVENT_TYPES, canonicalEventType, type PublicEventType } from './types.ts';

/**
 * The event-type catalogue (`GET /v1/platform/event_types`, GraphQL
 * `eventTypes`): every public type with its description, the JSON Schema of
 * its `data` and an example, all from the payload schemas (payload.ts). It is
 * a constant of the deployment, the same for every organization, and small:
 * one whole list, not paged (like a program's tier ladder).
 */
export const EventType = z.object({
  object: z.literal('event_type'),
  type: z.enum(PUBLIC_EVENT_TYPES),
  description: z.string(),
  schema: z.record(z.string(), z.unknown()).describe("JSON Schema (draft 2020-12) of the event's data"),
  example: z.record(z.string(), z.unknown()).describe('a data payload of this type (it validates against schema)'),
});
export type PublicEventTypeEntry = z.output<typeof EventType>;

const at = '2026-11-25T12:00:00.000Z';
const later = '2026-11-25T12:05:00.000Z';
const brand = 'brand_0193a4d1c2e07a6b9f3c2d1e0f4a5b6c';
const dist = 'dist_0193a4d1c2e07a6b9f3c2d1e0f4a5b6d';
const entity = 'ent_0193a4d1c2e07a6b9f3c2d1e0f4a5b6e';
const op = 'op_0193a4d1c2e07a6b9f3c2d1e0f4a5b6f';

const distribution = (status: string) => ({
  object: {
    id: dist,
    object: 'distribution',
    brand,
    name: 'Spring launch',
    status,
    budget: 50_000,
    budget_reserved: status === 'launching' ? 0 : 38_800,
    budget_spent: status === 'launching' ? 0 : 1_200,
    livemode: true,
    created_at: at,
    updated_at: later,
  },
});
const deployment = (status: string) => ({
  object: {
    id: 'dep_0193a4d1c2e07a6b9f3c2d1e0f4a5b70',
    object: 'deployment',
    distribution: dist,
    provider: 'sandbox',
    config: { spend: 1200 },
    connection: null,
    status,
    livemode: true,
    created_at: at,
    updated_at: later,
  },
});
const relationship = (status: string) => ({
  id: 'rel_0193a4d1c2e07a6b9f3c2d1e0f4a5b71',
  object: 'relationship',
  brand,
  entity,
  status,
  ended_at: status === 'ended' ? later : null,
  livemode: true,
  created_at: at,
  updated_at: later,
});
const evaluation = (qualified: boolean) => ({
  trigger: 'assertion',
  assertion: 'asrt_0193a4d1c2e07a6b9f3c2d1e0f4a5b72',
  evaluated_at: later,
  qualified,
  requirements: [
    {
      requirement: 'req_0193a4d1c2e07a6b9f3c2d1e0f4a5b73',
      metric: 'assert:verified',
      operator: 'exists',
      value: 1,
      present: qualified,
      passed: qualified,
    },
  ],
});
const enrollment = (status: string, standing = 'not_qualified') => ({
  id: 'enr_0193a4d1c2e07a6b9f3c2d1e0f4a5b74',
  object: 'enrollment',
  program: 'prog_0193a4d1c2e07a6b9f3c2d1e0f4a5b75',
  entity,
  status,
  standing,
  grace_ends_at: null,
  evaluation: status === 'active' ? evaluation(standing === 'qualified') : null,
  evaluated_at: status === 'active' ? later : null,
  tier: null,
  livemode: true,
  created_at: at,
  updated_at: later,
});
const assertion = (action: 'asserted' | 'revoked') => ({
  id: 'asrt_0193a4d1c2e07a6b9f3c2d1e0f4a5b72',
  object: 'assertion',
  entity,
  key: 'verified',
  action,
  value: action === 'asserted' ? 1 : null,
  expires_at: null,
  effective_at: later,
  livemode: true,
  created_at: later,
});
const operation = (status: string, error: { code: string; message: string } | null = null) => ({
  object: {
    id: op,
    object: 'operation',
    subject: { type: 'distribution', id: dist },
    kind: 'distribution.launch',
    status,
    waiting_reason: null,
    attempts: 1,
    max_attempts: 5,
    error,
    result: status === 'succeeded' ? { distribution_status: 'active', deployments_succeeded: 1, deployments_total: 1 } : {},
    progress: { phase: 'fan_out' },
    target_operation_id: null,
    parent_operation_id: null,
    livemode: true,
    created_at: at,
    updated_at: later,
    completed_at: ['pending', 'running', 'waiting'].includes(status) ? null : later,
  },
});
const budget = { amount: 38_800, brand, distribution: dist };
const payout = (status: 'created' | 'settled' | 'failed') => ({
  object: {
    id: 'po_0193a4d1c2e07a6b9f3c2d1e0f4a5b76',
    object: 'payout',
    amount: 1_200,
    entity,
    program: 'prog_0193a4d1c2e07a6b9f3c2d1e0f4a5b77',
    status,
    failure_reason: status === 'failed' ? 'the provider refused the payout' : null,
    period_end: at,
    operation: 'op_0193a4d1c2e07a6b9f3c2d1e0f4a5b78',
    created_at: at,
    updated_at: later,
  },
});

/** One payload per type; test/event/event-types.test.ts proves each validates against its schema. */
const EXAMPLES: Record<PublicEventType, Record<string, unknown>> = {
  'distribution.launching': distribution('launching'),
  'distribution.live': { ...distribution('active'), partial: false },
  'distribution.paused': distribution('paused'),
  'distribution.resumed': distribution('active'),
  'distribution.completed': distribution('completed'),
  'distribution.failed': distribution('failed'),
  'distribution.canceled': distribution('canceled'),
  'deployment.created': deployment('pending'),
  'deployment.activated': deployment('active'),
  'deployment.rejected': { ...deployment('rejected'), reason: 'The provider rejected the placement after review' },
  'deployment.paused': deployment('paused'),
  'deployment.completed': deployment('completed'),
  'deployment.drifted': { ...deployment('active'), detail: 'The live placement differs from the requested config' },
  'deployment.cancel_requested': deployment('canceling'),
  'deployment.canceled': deployment('canceled'),
  'deployment.cleanup_failed': { ...deployment('cleanup_failed'), reason: 'placement still live at the provider' },
  'relationship.created': relationship('created'),
  'relationship.activated': relationship('active'),
  'relationship.paused': relationship('paused'),
  'relationship.resumed': relationship('active'),
  'relationship.ended': relationship('ended'),
  'enrollment.created': enrollment('pending'),
  'enrollment.approved': enrollment('approved'),
  'enrollment.rejected': enrollment('rejected'),
  'enrollment.activated': enrollment('active'),
  'enrollment.qualified': { ...enrollment('active', 'qualified'), previous_status: 'not_qualified', trigger: 'assertion' },
  'enrollment.disqualified': { ...enrollment('active', 'not_qualified'), previous_status: 'qualified', trigger: 'assertion' },
  'assertion.created': assertion('asserted'),
  'assertion.revoked': assertion('revoked'),
  'payout.created': payout('created'),
  'payout.settled': payout('settled'),
  'payout.failed': payout('failed'),
  'operation.succeeded': operation('succeeded'),
  'operation.failed': operation('failed', { code: 'all_deployments_failed', message: 'None of the 1 deployments came up' }),
  'operation.cancel_requested': { ...operation('running'), canceled_by: 'op_0193a4d1c2e07a6b9f3c2d1e0f4a5b77' },
  'operation.canceled': operation('canceled'),
  'operation.superseded': operation('canceled'),
  'budget.reserved': budget,
  'budget.released': { ...budget, reason: 'completed' },
  'budget.reserve_failed': { ...budget, wallet_balance: 10_000 },
};

export function presentEventType(type: PublicEventType): PublicEventTypeEntry {
  return {
    object: 'event_type',
    type,
    description: EVENT_TYPE_DEFINITIONS[type].description,
    schema: eventDataJsonSchema(type),
    example: EXAMPLES[type],
  };
}

const TYPES_IN_ORDER = [...PUBLIC_EVENT_TYPES].sort();

export const eventTypes = capability({ name: 'event_types', title: 'Events', resource: 'events' })({
  list: read({
    summary: 'The event-type catalogue: every public type with the JSON Schema of its data and an example, ordered by type (one page)',
    input: z.strictObject({}),
    output: listOf(EventType),
    run: async () => wholeList(TYPES_IN_ORDER.map(presentEventType)),
  }),
  /** A legacy `program_member.*` spelling answers its canonical `relationship.*` type (as subscriptions read it). */
  retrieve: read({
    summary: 'One public event type; a legacy program_member.* spelling answers its canonical relationship.* type',
    params: ['type'],
    input: z.strictObject({}),
    output: EventType,
    run: async ({ params }) => {
      const type = canonicalEventType(params.type);
      if (!type) throw missing('event type', params.type);
      return presentEventType(type);
    },
  }),
});
