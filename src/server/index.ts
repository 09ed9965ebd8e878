// odata-engine/server: the reference service (docs/service.md), its storage and its adapters.
export { ODataService, type ServiceOptions, type ServiceRequest, type ServiceResponse } from './service.js';
export { createServer, odataPlugin, type CreateServerOptions, type OdataPluginOptions } from './fastify.js';
export { createNodeServer } from './node-http.js';
export {
  openBackend,
  openPostgresBackend,
  openSqliteBackend,
  type Backend,
  type BudgetOptions,
  type PostgresBackendOptions,
  type Readiness,
  type SqliteBackendOptions,
} from './backend.js';
export { Directory, TenancyError, type Credential, type KeyInfo, type Site } from './tenancy.js';
export { plantDataModel, entitySetNames, type EntitySetName } from './model.js';
export { loadDemoSite } from './demo-site.js';
