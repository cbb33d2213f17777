import { describeLinkEndpoint } from './link-endpoint.shared.js';

// linkApiKeyAccount
describeLinkEndpoint({
  path: '/v1/linked-accounts/api-key',
  scheme: 'api_key',
  credentials: { api_key: 'sk-live-a1b2c3d4e5f6-unique' },
  otherScheme: 'no_auth',
});
