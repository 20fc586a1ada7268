import type { Deps } from '../../src/domain/context.ts';
import { connectConfig } from '../../src/domain/connect/config.ts';
import type { RouteDef } from '../http/route.ts';
import { actionRoute } from './answer.ts';

/** The selected brand's partner-connect configuration. */
export function connectConfigRoutes(deps: Deps): RouteDef[] {
  const common = { tag: 'Connect configuration', errors: [400, 401, 403, 404, 409, 429, 503] };
  return [
    actionRoute(deps, connectConfig.retrieve, {
      ...common,
      method: 'GET',
      path: '/connect_config',
      operationId: 'retrieveConnectConfig',
      summary: "The brand's partner-connect configuration (defaults until first configured)",
      description: 'The connect configuration',
    }),
    actionRoute(deps, connectConfig.update, {
      ...common,
      method: 'POST',
      path: '/connect_config',
      operationId: 'updateConnectConfig',
      summary:
        'Configure partner connect: allowed_origins (origins only; https, or http on localhost), default_program, required_assertions, display name and colours; the fields sent replace the stored ones, null clears',
      description: 'The connect configuration',
    }),
  ];
}
