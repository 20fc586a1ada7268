import type { Tx } from '../../db/database.ts';
import type { Deps } from '../context.ts';
import { newId } from '../id.ts';
import { insertAuditRecord } from './store.ts';

export interface AuditEntry {
  organizationId: string;
  tokenId: string;
  scope: string;
  outcome: 'allowed' | 'refused' | 'replayed';
  reason?: string;
  requestId: string;
}

/** Records one scope execution. Allowed effects are audited in their own transaction; refusals on their own. */
export async function recordAudit(deps: Deps, entry: AuditEntry, tx?: Tx): Promise<void> {
  await insertAuditRecord(tx ?? deps.db.prisma, {
    id: newId('audit'),
    organizationId: entry.organizationId,
    tokenId: entry.tokenId,
    scope: entry.scope,
    outcome: entry.outcome,
    reason: entry.reason ?? null,
    requestId: entry.requestId,
    createdAt: deps.clock.now(),
  });
}
