// The request's signal reaches a store's reads on every path: a plain read (a store without prepareRead), a count,
// an entity by key, a navigation under its parent and $apply's input rows. The service hands stores its signal lazily
// (SignalOf: made when first read), so a path that passed the options on with a spread would lose it.
import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/service/store.js';
import { createODataService, type ServiceRequest } from '../../src/service/service.js';
import { libraryModel, libraryOperations, libraryRows } from './library-model.js';
import { tinyStore } from './tiny-store.js';

/** The tiny store, with the signal of every read, count and get it is asked for. */
function recording(seen: (AbortSignal | undefined)[]): Store {
  const store = tinyStore(libraryModel, libraryRows());
  return {
    ...store,
    read: (c, query, options) => {
      seen.push(options?.signal);
      return store.read(c, query, options);
    },
    count: (c, query, options) => {
      seen.push(options?.signal);
      return store.count(c, query, options);
    },
    get: (c, key, options) => {
      seen.push(options?.signal);
      return store.get(c, key, options);
    },
  };
}

describe('the request signal', () => {
  it.each([
    '/Books?$top=2',
    '/Books/$count',
    "/Books('978-0441478125')",
    "/Books('978-0441478125')/Reviews",
    '/Books?$apply=groupby((AuthorID))',
    '/Books?$apply=filter(AuthorID gt 0)/aggregate($count as N)',
  ])('reaches the store for %s', async (path) => {
    const seen: (AbortSignal | undefined)[] = [];
    const service = createODataService({ model: libraryModel, store: recording(seen), ...libraryOperations });
    const signal = new AbortController().signal;
    const request: ServiceRequest = { method: 'GET', url: path, headers: { host: 'x' }, signal };
    const response = await service.handle(request);
    expect(response.status, String(response.body)).toBe(200);
    expect(seen.length).toBeGreaterThan(0);
    for (const s of seen) expect(s).toBe(signal);
  });
});
