/**
 * The version of the HTTP contract (ACI's /v1 API), as the OpenAPI document and the MCP server
 * report it. It lives below every feature so that any of them may name it without importing the
 * application that composes them.
 */
export const API_VERSION = '0.0.1-beta.3';
