// The Fastify adapter: every route of the service on one wildcard handler that carries bytes to ODataService.
// `createServer` builds an app; `odataPlugin` mounts the same routes in an app of your own.
import Fastify, { type FastifyInstance, type FastifyPluginAsync, type FastifyServerOptions } from 'fastify';
import { ODataError } from '../errors.js';
import { ODataService, type ServiceResponse } from './service.js';

export interface OdataPluginOptions {
  readonly service: ODataService;
}

/** Mounts the service on every path of the app (or of the prefix it is registered under). */
export const odataPlugin: FastifyPluginAsync<OdataPluginOptions> = async (app, { service }) => {
  // the service decides about media types (415) itself: take every body as bytes
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: service.maxBodyBytes }, (_request, body, done) =>
    done(null, body),
  );
  const send = (reply: import('fastify').FastifyReply, response: ServiceResponse): void => {
    void reply
      .code(response.status)
      .headers(response.headers)
      .send(response.body ?? '');
  };
  app.setErrorHandler((error: { statusCode?: number; code?: string }, request, reply) => {
    const status = error.statusCode ?? 500;
    const odata =
      status === 413
        ? new ODataError('PayloadTooLarge', `The body exceeds ${service.maxBodyBytes} bytes`)
        : status === 400
          ? new ODataError('InvalidBody', 'The request could not be read')
          : error;
    request.log.error({ err: error }, 'request failed before the service');
    send(reply, service.errorResponse(odata));
  });
  app.setNotFoundHandler((request, reply) => {
    send(
      reply,
      service.errorResponse(new ODataError('NotFound', `No resource at ${request.url.split('?')[0]!.slice(0, 200)}`)),
    );
  });
  app.route({
    method: ['GET', 'HEAD', 'POST', 'PATCH', 'PUT', 'DELETE', 'OPTIONS'],
    url: '/*',
    handler: async (request, reply) => {
      const response = await service.handle({
        method: request.method,
        url: request.raw.url ?? request.url,
        headers: request.headers,
        body: Buffer.isBuffer(request.body) ? request.body : undefined,
      });
      send(reply, response);
      return reply;
    },
  });
};

export interface CreateServerOptions {
  readonly service: ODataService;
  readonly logger?: FastifyServerOptions['logger'];
}

/** A Fastify app serving the reference service (listen on it, or `inject` requests in tests). */
export function createServer(options: CreateServerOptions): FastifyInstance {
  const app = Fastify({
    logger: options.logger ?? false,
    // errors Fastify finds before any route (a malformed percent-encoding in the path) answer in the OData format
    frameworkErrors: (error, _request, reply) => {
      const odata =
        error.code === 'FST_ERR_BAD_URL'
          ? new ODataError('InvalidEncoding', 'The path is not valid percent-encoding')
          : new ODataError('InvalidBody', 'The request could not be read');
      const response = options.service.errorResponse(odata);
      void (reply as import('fastify').FastifyReply)
        .code(response.status)
        .headers(response.headers)
        .send(response.body ?? '');
    },
    bodyLimit: options.service.maxBodyBytes,
    // site names and keys are case-sensitive, and $metadata must not be taken apart
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 2048 },
  });
  void app.register(odataPlugin, { service: options.service });
  return app;
}
