// odata-engine/server: the reference service (docs/service.md), its storage and its adapters.
export { createPlantService, type PlantContext, type PlantService, type PlantServiceOptions } from './plant-service.js';
export type { ServiceRequest, ServiceResponse } from '../service/service.js';
export { createServer, odataPlugin, type CreateServerOptions, type OdataPluginOptions } from '../service/fastify.js';
export { createNodeServer } from '../service/node-http.js';
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
