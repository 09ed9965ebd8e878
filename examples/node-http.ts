// Embedding odata-engine in a plain node:http server: one entity set served from an array, with
// $filter, $select, $orderby, $top, $skip and $count, and OData JSON errors. Run it with
// `npx tsx examples/node-http.ts` and try:
//   curl "http://127.0.0.1:3000/Parts?\$filter=UnitCost%20gt%2010&\$orderby=UnitCost%20desc&\$top=2&\$count=true"
import { createServer, type Server } from 'node:http';
import { compileQuery } from '../src/backends/memory/index.js';
import { defineEntityType, isODataError, parseQuery, toODataErrorBody, validateQuery } from '../src/index.js';

export const Part = defineEntityType({
  name: 'Part',
  key: ['PartID'],
  properties: {
    PartID: { type: 'Edm.String', maxLength: 40 },
    Description: { type: 'Edm.String', nullable: false },
    UnitCost: { type: 'Edm.Decimal', precision: 19, scale: 4 },
    IsCritical: { type: 'Edm.Boolean', nullable: false },
  },
});

export const parts = [
  { PartID: 'P-100', Description: 'Pump seal', UnitCost: 12.5, IsCritical: true },
  { PartID: 'P-200', Description: 'Bearing', UnitCost: '48.0000', IsCritical: false },
  { PartID: 'P-300', Description: 'Gasket', UnitCost: null, IsCritical: false },
];

export function partsServer(): Server {
  return createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    const send = (status: number, body: unknown): void => {
      response.writeHead(status, { 'content-type': 'application/json', 'odata-version': '4.0' });
      response.end(JSON.stringify(body));
    };
    if (url.pathname !== '/Parts')
      return send(404, { error: { code: 'NotFound', message: `No resource at ${url.pathname}` } });
    try {
      // the raw query string, so that '+' stays a plus and positions match what the client sent
      const bound = validateQuery(parseQuery(url.search), Part, { maxTop: 100 });
      const page = compileQuery(bound).run(parts);
      send(200, {
        '@odata.context': '$metadata#Parts',
        ...(page.count === undefined ? {} : { '@odata.count': page.count }),
        value: page.value,
      });
    } catch (error) {
      // every mistake in the query is an ODataError with its status; anything else is a 500 without internals
      send(isODataError(error) ? error.status : 500, toODataErrorBody(error));
    }
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  partsServer().listen(3000, '127.0.0.1', () => console.log('http://127.0.0.1:3000/Parts'));
}
