/**
 * JSON Schemas (draft 7) of the ACI catalogue files, checked with ajv. Unknown keys are errors so
 * that a typo in a catalogue never passes silently.
 */
const NAME = '^[A-Z0-9]+(_[A-Z0-9]+)*$';

/** Where the end user finds the credentials: shown on the connect page beside the form. */
const credentialsHint = {
  hint: { type: 'string', minLength: 1, maxLength: 300 },
  hint_url: { type: 'string', format: 'uri', pattern: '^https://' },
};

const apiKeyScheme = {
  type: 'object',
  additionalProperties: false,
  required: ['location', 'name'],
  properties: {
    location: { enum: ['header', 'query', 'cookie', 'body'] },
    name: { type: 'string', minLength: 1 },
    prefix: { type: ['string', 'null'] },
    ...credentialsHint,
  },
};

/** Authorization request parameters that the linking flow sets itself. */
export const OAUTH2_FLOW_PARAMS = [
  'response_type',
  'client_id',
  'redirect_uri',
  'scope',
  'state',
  'code_challenge',
  'code_challenge_method',
  'resource',
];

const oauth2Scheme = {
  type: 'object',
  additionalProperties: false,
  required: [
    'location',
    'name',
    'prefix',
    'client_id',
    'client_secret',
    'scope',
    'authorize_url',
    'access_token_url',
    'refresh_token_url',
  ],
  properties: {
    location: { enum: ['header', 'query', 'cookie', 'body'] },
    name: { type: 'string', minLength: 1 },
    prefix: { type: 'string' },
    client_id: { type: 'string' },
    client_secret: { type: 'string' },
    scope: { type: 'string' },
    authorize_url: { type: 'string', format: 'uri' },
    access_token_url: { type: 'string', format: 'uri' },
    refresh_token_url: { type: 'string', format: 'uri' },
    token_endpoint_auth_method: { enum: ['client_secret_basic', 'client_secret_post', 'none'] },
    /** RFC 8707: the resource the tokens are for (a remote MCP server), sent in every request of the flow. */
    resource: { type: 'string', format: 'uri' },
    redirect_url: { type: 'string', format: 'uri' },
    /** Where the token response keeps the tokens when a provider nests them (e.g. "authed_user"). */
    token_response_path: { type: 'string' },
    /**
     * Extra query parameters of the authorization request (e.g. Google's access_type=offline and
     * prompt=consent for a refresh token); the parameters of the flow itself cannot be replaced.
     */
    authorize_params: {
      type: 'object',
      additionalProperties: { type: 'string' },
      propertyNames: { not: { enum: OAUTH2_FLOW_PARAMS } },
    },
    /** Plain words for scopes, shown to the end user before the authorization (scopes without one are listed as is). */
    scope_descriptions: {
      type: 'object',
      additionalProperties: { type: 'string', minLength: 1, maxLength: 200 },
    },
  },
};

const emptyScheme = { type: 'object', additionalProperties: false, properties: {} };
const credentialsScheme = { type: 'object', additionalProperties: false, properties: credentialsHint };

export const APP_FILE_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: [
    'name',
    'display_name',
    'provider',
    'version',
    'description',
    'logo',
    'categories',
    'visibility',
    'active',
    'security_schemes',
    'default_security_credentials_by_scheme',
  ],
  properties: {
    name: { type: 'string', pattern: NAME, maxLength: 100 },
    display_name: { type: 'string', minLength: 1 },
    provider: { type: 'string' },
    version: { type: 'string' },
    description: { type: 'string', minLength: 1 },
    logo: { type: ['string', 'null'] },
    categories: { type: 'array', items: { type: 'string', minLength: 1 } },
    visibility: { enum: ['public', 'private'] },
    active: { type: 'boolean' },
    security_schemes: {
      type: 'object',
      additionalProperties: false,
      minProperties: 1,
      properties: {
        no_auth: emptyScheme,
        api_key: apiKeyScheme,
        http_basic: credentialsScheme,
        http_bearer: credentialsScheme,
        oauth2: oauth2Scheme,
      },
    },
    default_security_credentials_by_scheme: {
      type: 'object',
      additionalProperties: false,
      properties: {
        api_key: {
          type: 'object',
          additionalProperties: false,
          required: ['secret_key'],
          properties: { secret_key: { type: 'string' } },
        },
        http_basic: {
          type: 'object',
          additionalProperties: false,
          required: ['username', 'password'],
          properties: { username: { type: 'string' }, password: { type: 'string' } },
        },
        http_bearer: {
          type: 'object',
          additionalProperties: false,
          required: ['token'],
          properties: { token: { type: 'string' } },
        },
      },
    },
  },
};

const wireRule = {
  type: 'object',
  additionalProperties: false,
  properties: {
    style: {
      enum: ['simple', 'label', 'matrix', 'form', 'spaceDelimited', 'pipeDelimited', 'deepObject', 'tabDelimited'],
    },
    explode: { type: 'boolean' },
    allow_reserved: { const: true },
    content_type: { type: 'string' },
  },
};

const restProtocolData = {
  type: 'object',
  additionalProperties: false,
  required: ['method', 'path', 'server_url'],
  properties: {
    method: { enum: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] },
    path: { type: 'string' },
    server_url: { type: 'string', pattern: '^https?://' },
    content_type: { type: 'string' },
    headers: { type: 'object', additionalProperties: { type: 'string' } },
    // An imported operation's wire rules (src/functions/openapi-wire.ts).
    openapi: {
      type: 'object',
      additionalProperties: false,
      required: ['v'],
      properties: {
        v: { const: 1 },
        parameters: {
          type: 'object',
          additionalProperties: false,
          properties: Object.fromEntries(
            ['path', 'query', 'header', 'cookie'].map((section) => [
              section,
              { type: 'object', additionalProperties: wireRule },
            ]),
          ),
        },
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['media_type'],
          properties: {
            media_type: { type: 'string', minLength: 1 },
            encoding: { type: 'object', additionalProperties: wireRule },
            files: { type: 'array', items: { type: 'string' } },
            base64_text: { const: true },
          },
        },
        security: {
          type: 'array',
          items: {
            type: 'array',
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['scheme'],
              properties: {
                scheme: { type: 'string', minLength: 1 },
                kind: { enum: ['api_key', 'http_basic', 'http_bearer', 'oauth2'] },
                in: { enum: ['header', 'query', 'cookie'] },
                name: { type: 'string', minLength: 1 },
              },
            },
          },
        },
        server: {
          type: 'object',
          additionalProperties: false,
          required: ['url', 'variables'],
          properties: {
            url: { type: 'string', pattern: '^https?://' },
            variables: {
              type: 'object',
              additionalProperties: {
                type: 'object',
                additionalProperties: false,
                required: ['default'],
                properties: {
                  default: { type: 'string' },
                  enum: { type: 'array', minItems: 1, items: { type: 'string' } },
                },
              },
            },
          },
        },
      },
    },
  },
};

/**
 * `protocol_data` of a tool of a remote MCP server (`patchbay catalog add-mcp`): where the server is,
 * the tool's own name there, and the hints its annotations give clients.
 */
const mcpProtocolData = {
  type: 'object',
  additionalProperties: false,
  required: ['server_url', 'tool'],
  properties: {
    server_url: { type: 'string', pattern: '^https?://' },
    tool: { type: 'string', minLength: 1, maxLength: 256 },
    annotations: {
      type: 'object',
      additionalProperties: false,
      properties: {
        title: { type: 'string' },
        readOnlyHint: { type: 'boolean' },
        destructiveHint: { type: 'boolean' },
        idempotentHint: { type: 'boolean' },
        openWorldHint: { type: 'boolean' },
      },
    },
  },
};

export const FUNCTIONS_FILE_SCHEMA = {
  type: 'array',
  items: {
    type: 'object',
    additionalProperties: false,
    required: ['name', 'description', 'tags', 'visibility', 'active', 'protocol', 'protocol_data', 'parameters'],
    properties: {
      name: { type: 'string', pattern: '^[A-Z0-9]+(_[A-Z0-9]+)*__[A-Z0-9]+(_[A-Z0-9]+)*$', maxLength: 255 },
      description: { type: 'string', minLength: 1 },
      tags: { type: 'array', items: { type: 'string' } },
      visibility: { enum: ['public', 'private'] },
      active: { type: 'boolean' },
      protocol: { enum: ['rest', 'connector', 'mcp'] },
      protocol_data: { type: 'object' },
      parameters: { type: 'object' },
      response: { type: 'object' },
      security_schemes: {
        type: 'array',
        items: { enum: ['no_auth', 'api_key', 'http_basic', 'http_bearer', 'oauth2'] },
      },
    },
    allOf: [
      {
        if: { properties: { protocol: { const: 'rest' } } },
        then: { properties: { protocol_data: restProtocolData } },
      },
      {
        if: { properties: { protocol: { const: 'mcp' } } },
        then: { properties: { protocol_data: mcpProtocolData } },
      },
      {
        if: { properties: { protocol: { const: 'connector' } } },
        then: { properties: { protocol_data: { type: 'object', additionalProperties: false, properties: {} } } },
      },
    ],
  },
};
