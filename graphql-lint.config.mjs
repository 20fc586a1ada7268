// The GraphQL schema linter (The Guild's @graphql-eslint) over schema.graphql,
// run by test/graphql/schema-lint.test.ts (so by `npm test` in CI) and `npm run lint:schema`.
// Base: the plugin's schema-recommended and schema-relay rule sets; the options
// below are where this schema knowingly differs.
import graphqlPlugin from '@graphql-eslint/eslint-plugin';

/** Object types without an id: results and value objects, not addressable (every addressable one implements Node). */
const VALUE_TYPES = [
  'AssertionRevocation',
  'CreateUnitPayload',
  'DistributionOperation',
  'DeletedProgramTierChange',
  'DistributionValidation',
  'ConnectConfig',
  'ConnectionRevocation',
  'EntityIdentity',
  'EventCatalogueEntry',
  'EventSubject',
  'MeasurementBatch',
  'PageInfo',
  'PerformanceRollup',
  'PerformanceRollupList',
  'ProgramTierChange',
  'UnitPage',
  'Viewer',
  'WebhookAttempt',
  'WebhookAttemptFailure',
  'WebhookDeliveryStatusSummary',
  'WebhookEndpointFilter',
  'WebhookEndpointHealth',
  'WebhookEndpointPolicy',
  'WebhookHealthWindow',
];

export default [
  {
    files: ['schema.graphql'],
    languageOptions: { parser: graphqlPlugin.parser, parserOptions: { graphQLConfig: { schema: 'schema.graphql' } } },
    plugins: { '@graphql-eslint': graphqlPlugin },
    rules: {
      ...graphqlPlugin.configs['flat/schema-recommended'].rules,
      ...graphqlPlugin.configs['flat/schema-relay'].rules,
      // Every type, enum, input and scalar is described; the root types and the
      // connection, edge and PageInfo types the Relay plugin generates are not.
      // (Root fields: the rule's rootField option matches nothing when a schema has
      // several root types, so test/graphql/schema-lint.test.ts checks them itself.)
      '@graphql-eslint/require-description': [
        'error',
        {
          types: true,
          DirectiveDefinition: true,
          ignoredSelectors: [
            '[type=ObjectTypeDefinition][name.value=/^(Query|Mutation|Subscription|PageInfo)$/]',
            '[type=ObjectTypeDefinition][name.value=/(Connection|Edge)$/]',
          ],
        },
      ],
      '@graphql-eslint/strict-id-in-types': [
        'error',
        { acceptedIdNames: ['id'], acceptedIdTypes: ['ID'], exceptions: { types: VALUE_TYPES, suffixes: ['Connection', 'Edge'] } },
      ],
      // Plain lists of small, bounded sets (a program's requirements, the brands) are not connections.
      '@graphql-eslint/relay-edge-types': [
        'error',
        { withEdgeSuffix: true, shouldImplementNode: true, listTypeCanWrapOnlyEdgeType: false },
      ],
    },
  },
];
