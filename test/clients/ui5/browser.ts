// Runs OpenUI5 (from node_modules/@openui5, unbundled) in headless Chromium, same-origin with the reference server:
// the page and UI5's resources are answered by page.route() under `${origin}/ui5test/`, every other request (the
// OData traffic) goes to the real server. The service sends no CORS headers, hence the shared origin.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page, type Route } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

const here = dirname(fileURLToPath(import.meta.url));
const openui5 = join(here, '../../../node_modules/@openui5');

/** The UI5 libraries' source folders, sap.ui.core first (it holds the bootstrap). */
function librarySources(): string[] {
  const names = existsSync(openui5) ? readdirSync(openui5) : [];
  names.sort((a, b) => (a === 'sap.ui.core' ? -1 : b === 'sap.ui.core' ? 1 : a.localeCompare(b)));
  return names.map((name) => join(openui5, name, 'src')).filter((dir) => existsSync(dir));
}

const TYPES: Record<string, string> = {
  '.js': 'application/javascript; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.properties': 'text/plain; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.xml': 'application/xml; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.woff2': 'font/woff2',
};

/** What a UI5 build writes to resources/sap-ui-version.json (the sources lack it; UI5 logs an error without it). */
function versionInfo(): Buffer {
  const libraries = librarySources().map((src) => {
    const { name, version } = JSON.parse(readFileSync(join(src, '../package.json'), 'utf8')) as {
      name: string;
      version: string;
    };
    return { name: name.replace('@openui5/', ''), version };
  });
  const core = libraries.find((l) => l.name === 'sap.ui.core');
  return Buffer.from(JSON.stringify({ name: 'openui5', version: core?.version ?? '', libraries }));
}

/** `resources/<path>` → the first library source folder that has it (UI5 asks for many files: read each once). */
const cache = new Map<string, Buffer | null>();
function resource(path: string): Buffer | null {
  const cached = cache.get(path);
  if (cached !== undefined) return cached;
  let found: Buffer | null = null;
  const relative = normalize(path);
  if (!relative.startsWith('..') && !relative.startsWith(sep)) {
    for (const dir of librarySources()) {
      const file = join(dir, relative);
      if (existsSync(file) && statSync(file).isFile()) {
        found = readFileSync(file);
        break;
      }
    }
  }
  cache.set(path, found);
  return found;
}

/** One HTTP exchange of the page with the service (not UI5's own resources), as the browser sent and received it. */
export interface Exchange {
  readonly method: string;
  readonly url: string;
  readonly requestHeaders: Readonly<Record<string, string>>;
  readonly requestBody: string | null;
  readonly status: number;
  readonly responseHeaders: Readonly<Record<string, string>>;
  readonly responseBody: string;
}

export interface Ui5Session {
  readonly page: Page;
  readonly version: string;
  /** The service traffic so far, in the order the responses arrived (await `settled()` first). */
  readonly exchanges: Exchange[];
  /** The browser console's errors and warnings, and uncaught page errors. */
  readonly console: string[];
  /** Waits until every response seen so far has been recorded with its body. */
  settled(): Promise<void>;
  /** Calls `window.ui5Api[name](argument)` in the page (see app.js) and returns its JSON result. */
  call<T>(name: string, argument?: unknown): Promise<T>;
  close(): Promise<void>;
}

export function launchChromium(): Promise<Browser> {
  // the machine's Chromium only: no tool may download a browser
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
    ],
  });
}

/**
 * Opens a page at `${origin}/ui5test/index.html` that boots UI5 (sap.m) and app.js, with `serviceUrl` (ending in
 * `/`) and the API key handed to the page. Resolves once the Core is ready and the page's API is there.
 */
export async function openUi5(browser: Browser, origin: string, serviceUrl: string, key: string): Promise<Ui5Session> {
  const page = await browser.newPage();
  const exchanges: Exchange[] = [];
  const pending: Promise<void>[] = [];
  const messages: string[] = [];
  const base = `${origin}/ui5test/`;

  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning')
      messages.push(`${message.type()}: ${message.text()}`);
  });
  page.on('pageerror', (error) => messages.push(`pageerror: ${error.message}`));
  page.on('response', (response) => {
    const request = response.request();
    if (!request.url().startsWith(serviceUrl)) return;
    pending.push(
      (async () => {
        const [requestHeaders, responseHeaders, body] = await Promise.all([
          request.allHeaders(),
          response.allHeaders(),
          response.text().catch(() => ''),
        ]);
        exchanges.push({
          method: request.method(),
          url: request.url(),
          requestHeaders,
          requestBody: request.postData(),
          status: response.status(),
          responseHeaders,
          responseBody: body,
        });
      })(),
    );
  });

  const config = JSON.stringify({ serviceUrl, key }).replace(/</g, '\\u003c');
  const index = `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>UI5 client test</title>
<script>window.ui5TestConfig = ${config};</script>
<script id="sap-ui-bootstrap" src="resources/sap-ui-core.js" data-sap-ui-theme="sap_horizon"
  data-sap-ui-libs="sap.m" data-sap-ui-compat-version="edge" data-sap-ui-language="en"></script>
<script src="app.js"></script>
</head><body class="sapUiBody"><div id="content"></div></body></html>`;
  const app = readFileSync(join(here, 'app.js'));

  await page.route(`${base}**`, (route: Route) => {
    const path = new URL(route.request().url()).pathname.slice(new URL(base).pathname.length);
    if (path === 'index.html') return route.fulfill({ status: 200, contentType: TYPES['.html']!, body: index });
    if (path === 'app.js') return route.fulfill({ status: 200, contentType: TYPES['.js']!, body: app });
    if (path === 'resources/sap-ui-version.json')
      return route.fulfill({ status: 200, contentType: TYPES['.json']!, body: versionInfo() });
    const body = path.startsWith('resources/') ? resource(decodeURIComponent(path.slice('resources/'.length))) : null;
    // missing files are normal for unbundled UI5 (library-preload, compiled theme CSS, other languages)
    if (body === null) return route.fulfill({ status: 404, contentType: 'text/plain', body: 'not found' });
    return route.fulfill({
      status: 200,
      contentType: TYPES[extname(path)] ?? 'application/octet-stream',
      body,
    });
  });

  await page.goto(`${base}index.html`);
  const version = await page.evaluate(() => (globalThis as unknown as { ui5Ready: Promise<string> }).ui5Ready);

  return {
    page,
    version,
    exchanges,
    console: messages,
    settled: async () => {
      // responses may arrive while earlier ones are recorded: loop until no new one came
      let seen = -1;
      while (seen !== pending.length) {
        seen = pending.length;
        await Promise.all(pending);
      }
    },
    call: <T>(name: string, argument?: unknown) =>
      page.evaluate(
        ([n, a]) =>
          (globalThis as unknown as { ui5Api: Record<string, (x: unknown) => Promise<unknown>> }).ui5Api[n as string]!(
            a,
          ),
        [name, argument] as const,
      ) as Promise<T>,
    close: () => page.close(),
  };
}
