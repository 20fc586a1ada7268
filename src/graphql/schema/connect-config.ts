import { connectConfig, type PublicConnectConfig } from '../../domain/connect/config.ts';
import { mutationAction, queryAction } from '../action.ts';
import { builder } from '../builder.ts';
import { given } from '../connection.ts';

/** The selected brand's partner-connect configuration. */
const ConnectConfig = builder.objectRef<PublicConnectConfig>('ConnectConfig').implement({
  description: "The selected brand's partner-connect configuration",
  fields: (t) => ({
    brand: t.exposeString('brand'),
    allowedOrigins: t.exposeStringList('allowed_origins', { description: 'Origins CORS admits for the brand’s publishable keys' }),
    defaultProgram: t.exposeString('default_program', { nullable: true }),
    requiredAssertions: t.exposeStringList('required_assertions'),
    displayName: t.exposeString('display_name', { nullable: true }),
    primaryColor: t.exposeString('primary_color', { nullable: true }),
    accentColor: t.exposeString('accent_color', { nullable: true }),
    livemode: t.exposeBoolean('livemode'),
    updatedAt: t.exposeString('updated_at', { nullable: true }),
  }),
});

queryAction('connectConfig', connectConfig.retrieve, {
  description: "The brand's partner-connect configuration (scope connect_config:read)",
  type: ConnectConfig,
  args: () => ({}),
  input: () => ({}),
});

mutationAction('updateConnectConfig', connectConfig.update, {
  description: 'Configure partner connect; the arguments given replace the stored values, null clears (scope connect_config:write)',
  type: ConnectConfig,
  args: (arg) => ({
    allowedOrigins: arg.stringList(),
    defaultProgram: arg.string(),
    requiredAssertions: arg.stringList(),
    displayName: arg.string(),
    primaryColor: arg.string(),
    accentColor: arg.string(),
  }),
  input: (a) => ({
    input: given({
      allowed_origins: a.allowedOrigins,
      default_program: a.defaultProgram,
      required_assertions: a.requiredAssertions,
      display_name: a.displayName,
      primary_color: a.primaryColor,
      accent_color: a.accentColor,
    }),
  }),
});
