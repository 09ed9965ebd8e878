// The public API of odata-engine's core, listed by hand: internals stay internal.
export type * from './syntax/ast.js';
export { canonicalFunctions } from './syntax/ast.js';
export {
  parseFilter,
  parseSelect,
  parseExpand,
  parseOrderBy,
  parseTop,
  parseSkip,
  parseCount,
  defaultMaxDepth,
  type ParseOptions,
} from './syntax/parser.js';
export { parseQuery, type QueryOptions, type QueryParseOptions, type SystemOption } from './syntax/query-string.js';
export { printFilter, printOrderBy, printSelect, printExpand, printLiteral } from './syntax/print.js';
export {
  ODataError,
  isODataError,
  toODataErrorBody,
  errorCatalog,
  type ErrorCode,
  type ODataErrorBody,
  type ODataErrorDetail,
  type ODataErrorOptions,
} from './errors.js';
export { edmPrimitiveTypes, isEdmPrimitiveType, type EdmPrimitiveType } from './values/edm.js';
export {
  defineEntityType,
  defineModel,
  SchemaError,
  readableProperties,
  type ActionDefinition,
  type EdmValues,
  type EntitySetDefinition,
  type EntityType,
  type EntityTypeDefinition,
  type FunctionDefinition,
  type Model,
  type ModelDefinition,
  type NavigationDefinition,
  type NavigationProperty,
  type Property,
  type PropertyDefinition,
  type Row,
  type RowOfDefinition,
} from './model/schema.js';
export { validateQuery, defaultLimits, type QueryLimits } from './validate/bind.js';
export type * from './validate/bound.js';
export { toCsdlXml, toCsdlJson, type CsdlJsonObject, type CsdlJsonValue } from './model/csdl.js';
