/** What the catalogue module offers outside it: its module and the OpenAPI import's pure steps (read, map, name). */
export { CatalogModule } from './catalog.module.js';
export { loadOpenApiDocument } from './openapi/openapi-source.js';
export { mapOpenApiDocument } from './openapi/openapi-mapping.js';
export { MAX_FUNCTION_NAME } from './openapi/openapi-names.js';
