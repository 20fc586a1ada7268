/**
 * The platform API client library. Talks HTTP only (fetch and Web Crypto),
 * so it runs in Node 20+ and in browsers; it imports nothing from the server.
 */
export { PlatformClient, SURFACE_B_PATH, type PlatformClientOptions } from './platform-client.ts';
export {
  ScopeClient,
  TokenClient,
  OperatorClient,
  type PlatformScope,
  type PlatformToken,
  type Unit,
  type OkResponse,
  type Wallet,
} from './surface-a.ts';
export { PlatformError, isPlatformError } from './error.ts';
export { ConnectClient, type ConnectClientOptions, type ConnectStatus } from './connect.ts';
export {
  webhooks,
  verify as verifyWebhook,
  sign as signWebhook,
  generateSecret as generateWebhookSecret,
  type WebhookHeaders,
  type VerifyOptions,
  type SignOptions,
} from './webhooks.ts';
export { toCamelCase, toSnakeCase } from './key-case.ts';
export type { Page, PagePromise } from './list.ts';
export type { RequestOptions, FetchLike } from './request-sender.ts';
export { isTerminal, TERMINAL_OPERATION_STATUSES, type WaitOptions } from './resources/operations.ts';
export type { DeliveryListParams } from './resources/webhook-endpoints.ts';
export type { EventListParams } from './resources/events.ts';
export type { RollupPage } from './resources/performance.ts';
export type { PayoutExportParams } from './resources/payouts.ts';
export type { ListPageParams, RelationshipMove } from './resources/relationships.ts';
export * from './resources/types.ts';
