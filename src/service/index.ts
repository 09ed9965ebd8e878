// odata-engine/service: a complete OData service for any model over any store (docs/embedding.md). The adapters
// (odata-engine/service/fastify, /node, /fetch) and the SQL drivers (/sqlite, /postgres) are entries of their own,
// so that no framework or driver is loaded unless it is imported.
export {
  createODataService,
  ODataService,
  type ActionHandler,
  type ActionImportHandler,
  type FunctionHandler,
  type CreateHandler,
  type HttpService,
  type ODataServiceOptions,
  type Resolved,
  type ResolveRequest,
  type ServiceRequest,
  type ServiceResponse,
  type WriteEvent,
  type ODataVersion,
} from './service.js';
export {
  collectionOfType,
  collectionsOf,
  duplicateKey,
  linkTupleText,
  linkValueText,
  type PreparedCount,
  type PreparedRead,
  type PrepareOptions,
  type ReadOptions,
  type ReadResult,
  type RelatedLink,
  type RelatedResult,
  type Store,
  type StoreCollection,
  type StoreTransaction,
} from './store.js';
export { MemoryStore } from './memory-store.js';
export { openSqlStore, schemaSql, SqlStore, type SqlStoreOptions, type SqlTransaction } from './sql/sql-store.js';
export type { SqlDriver, SqlSession, Readiness } from './sql/driver.js';
export type { BodyOptions } from './body.js';
export { insertRow, modifiedTime, touchModified } from './writes.js';
export { etagOf, etagMatches } from './etag.js';
