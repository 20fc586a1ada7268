import { ConnectConfig as ConnectConfigShape, connectConfig } from '../../domain/connect/config.ts';
import { mutationAction, queryAction } from '../action.ts';
import { objectType } from '../derive.ts';

/** The selected brand's partner-connect configuration. */
const ConnectConfig = objectType('ConnectConfig', ConnectConfigShape, {
  description: "The selected brand's partner-connect configuration",
});

queryAction('connectConfig', connectConfig.retrieve, {
  description: "The brand's partner-connect configuration (scope connect_config:read)",
  type: ConnectConfig,
});

mutationAction('updateConnectConfig', connectConfig.update, {
  description: 'Configure partner connect; the arguments given replace the stored values, null clears (scope connect_config:write)',
  type: ConnectConfig,
});
