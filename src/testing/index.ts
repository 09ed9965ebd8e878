// odata-engine/testing: property-test any OData implementation (a function over rows, a SQL mapping, a remote
// service) against the memory backend as its oracle. fast-check is a peer dependency. docs/testing.md.
export {
  dataSetOf,
  edgeValues,
  keyOf,
  literalOf,
  propertyValue,
  rowOf,
  rowsOf,
  valueText,
  type DataSet,
  type DataSetOptions,
  type RowOptions,
  type RowsOptions,
} from './values.js';
export {
  expressionOf,
  filterFunctions,
  filterOf,
  filterOperators,
  moreFilterFunctions,
  type FilterFunction,
  type FilterOperator,
  type FilterOptions,
} from './filters.js';
export {
  expandOf,
  orderByOf,
  queryOf,
  queryText,
  selectOf,
  type GeneratedQuery,
  type QueryArbitraryOptions,
  type QueryOptionName,
} from './queries.js';
export { applyOf, type ApplyOptions, type GeneratedApply } from './apply.js';
export { oracle, type OracleAnswer } from './oracle.js';
export {
  checkAgainstOracle,
  OracleMismatchError,
  type CheckOptions,
  type CheckReport,
  type Implementation,
  type ImplementationAnswer,
  type QueryRunner,
} from './check.js';
export { odataRunner, readAllRows, type ODataRunnerOptions } from './odata.js';
