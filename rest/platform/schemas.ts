/** The error envelope of Surface B, for the OpenAPI document (response shapes are declared by the actions, beside their presenters). */
export const ErrorEnvelope = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message', 'param', 'request_id'],
      properties: {
        code: { type: 'string', description: 'Stable error code; branch on it, never on the message' },
        message: { type: 'string' },
        param: { type: ['string', 'null'] },
        request_id: { type: 'string', description: 'Also in the Request-Id header' },
      },
    },
  },
};
