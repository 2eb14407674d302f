/**
 * The API description: the schemas request readers are driven by, what each route says about
 * itself, and the OpenAPI document and reference page built from the routes the server has.
 */
export { allowsNull, type JsonSchema, type JsonType, objectSchema, type ObjectSchema } from './json-schema.js';
export type { AnswerDescription, RouteAuth, RouteDescription, RouteTag } from './route-description.js';
export { type DescribedRoute, openApiDocument, openApiPath } from './openapi-document.js';
export { referencePage } from './reference-page.js';
export { REFERENCE_STYLE } from './reference-page.js';
