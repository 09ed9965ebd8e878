// A remote OData service as the implementation under test: each generated query is sent as a GET of the entity set,
// every page of the answer followed (`@odata.nextLink`), and the rows and `@odata.count` given to checkAgainstOracle.
import type { Row } from '../model/schema.js';
import type { ImplementationAnswer, QueryRunner } from './check.js';

export interface ODataRunnerOptions {
  /** The entity set's URL: `http://127.0.0.1:4004/odata/Books`. */
  readonly url: string;
  /** Headers for every request (credentials). `Accept` asks for JSON with exact decimals unless given. */
  readonly headers?: Readonly<Record<string, string>>;
  /** The fetch to use (default the global one). */
  readonly fetch?: typeof globalThis.fetch;
  /** At most this many pages per query (a loop of next links is an error); default 1,000. */
  readonly maxPages?: number;
}

interface ODataPage {
  readonly value?: unknown;
  readonly '@odata.count'?: unknown;
  readonly '@odata.nextLink'?: unknown;
}

/** Reads one URL and every page after it: the rows, and the count of the first page. */
async function readPages(
  url: string,
  options: ODataRunnerOptions,
): Promise<{ rows: Row[]; count: number | undefined }> {
  const fetch = options.fetch ?? globalThis.fetch;
  const headers = { accept: 'application/json;odata.metadata=minimal;IEEE754Compatible=true', ...options.headers };
  const rows: Row[] = [];
  let count: number | undefined;
  let next: string | undefined = url;
  for (let page = 0; next !== undefined; page++) {
    if (page >= (options.maxPages ?? 1000)) throw new Error(`more than ${page} pages for ${url}`);
    const response = await fetch(next, { headers });
    const text = await response.text();
    if (!response.ok) throw new Error(`GET ${next} answered ${response.status}: ${text.slice(0, 500)}`);
    const body = JSON.parse(text) as ODataPage;
    if (!Array.isArray(body.value)) throw new Error(`GET ${next} answered no value array: ${text.slice(0, 500)}`);
    for (const item of body.value as Row[]) {
      // annotations (`@odata.etag`, `@odata.id`) are not properties
      const row: Row = {};
      for (const [name, value] of Object.entries(item)) if (!name.includes('@')) row[name] = value;
      rows.push(row);
    }
    if (page === 0 && body['@odata.count'] !== undefined) count = Number(body['@odata.count']);
    next = typeof body['@odata.nextLink'] === 'string' ? new URL(body['@odata.nextLink'], next).href : undefined;
  }
  return { rows, count };
}

/** A query runner that sends each generated query to an OData service's entity set. */
export function odataRunner(options: ODataRunnerOptions): QueryRunner {
  return async (query): Promise<ImplementationAnswer> => {
    const url = query.text === '' ? options.url : `${options.url}?${query.text}`;
    const { rows, count } = await readPages(url, options);
    return count === undefined ? rows : { rows, count };
  };
}

/** Every row of a remote entity set (for `checkAgainstOracle`'s `rows` when the service cannot be written). */
export async function readAllRows(options: ODataRunnerOptions): Promise<Row[]> {
  return (await readPages(options.url, options)).rows;
}
