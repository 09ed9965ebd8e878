// Sites, their API keys and users: the control plane. Secrets are stored only as scrypt hashes with their own salt
// and compared in constant time; a key is shown once, when it is made, as `<id>.<secret>`, and can be revoked.
import * as crypto from 'node:crypto';
import { createHash, randomBytes, scrypt as scryptCallback, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import type { SqlParam } from '../backends/sql/index.js';
import type { ColumnDefinition, Statements, TableDefinition } from '../backends/sql/dialect.js';
import { dialects } from '../backends/sql/dialects.js';
import type { SqlDriver } from '../service/sql/driver.js';

const scrypt = promisify(scryptCallback) as (
  password: string,
  salt: Buffer,
  keylen: number,
  options: { N: number; r: number; p: number; maxmem: number },
) => Promise<Buffer>;

const SCRYPT = { N: 16384, r: 8, p: 1, maxmem: 64 * 1024 * 1024 } as const;
const HASH_BYTES = 32;

/** Site names: the first path segment of every URL (and the first label of a host name), so DNS-label shaped. */
export const SITE_NAME = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const USER_NAME = /^[^\s:]{1,40}$/u;

export interface Site {
  readonly name: string;
  /** The IANA time zone offset-less instants are read in (MeterReadings.ReadingDate). */
  readonly timeZone: string;
  readonly createdDate: string;
}

export interface KeyInfo {
  readonly id: string;
  readonly label: string | null;
  readonly createdDate: string;
  readonly revoked: boolean;
}

/** Who made a request: an API key or a user of the site. */
export interface Credential {
  readonly site: string;
  readonly kind: 'key' | 'user';
  /** The key's id or the user's name (never a secret). */
  readonly name: string;
}

export class TenancyError extends Error {
  override readonly name = 'TenancyError';
}

async function hashSecret(secret: string, salt: Buffer): Promise<Buffer> {
  return scrypt(secret, salt, HASH_BYTES, SCRYPT);
}

async function verifySecret(secret: string, salt: Buffer, expected: Buffer): Promise<boolean> {
  const actual = await hashSecret(secret, salt);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** A fixed salt and hash to spend the same scrypt time on an unknown key id or user as on a known one. */
const DUMMY_SALT = randomBytes(16);
const DUMMY_HASH = randomBytes(HASH_BYTES);

const REVOCATION_CHECK_MS = 1_000;
const MAX_VERIFIED = 10_000;

export interface DirectoryOptions {
  /**
   * How long the outcome of checking a presented credential is remembered, right or wrong (default 60 s; 0: every
   * request pays a scrypt). Remembering both outcomes keeps a right key, a wrong key and a wrong password equally
   * fast: the first presentation of anything costs one scrypt, a repeat none.
   */
  readonly credentialCacheMs?: number;
}

// The control plane's tables, written by the driver's dialect. Names and ids are checked before they are stored
// (SITE_NAME, USER_NAME, key ids of 13 characters), so 100 characters bound every key column.
const text = (name: string, nullable = false): ColumnDefinition => ({ name, type: 'Edm.String', nullable });
const keyText = (name: string): ColumnDefinition => ({
  name,
  type: 'Edm.String',
  maxLength: 100,
  isKey: true,
  nullable: false,
});
const bytes = (name: string): ColumnDefinition => ({ name, type: 'Edm.Binary', nullable: false });

const SITES: TableDefinition = {
  name: 'odata_sites',
  columns: [keyText('name'), text('time_zone'), text('created')],
  key: ['name'],
};
const KEYS: TableDefinition = {
  name: 'odata_keys',
  columns: [
    keyText('id'),
    text('site'),
    text('label', true),
    bytes('salt'),
    bytes('hash'),
    text('created'),
    { name: 'revoked', type: 'Edm.Boolean', nullable: false },
  ],
  key: ['id'],
};
const USERS: TableDefinition = {
  name: 'odata_users',
  columns: [keyText('site'), keyText('name'), bytes('salt'), bytes('hash'), text('created')],
  key: ['site', 'name'],
};

/** Every statement the directory runs, written once per dialect. */
function directorySql(s: Statements) {
  const columns = (table: TableDefinition): string[] => table.columns.map((c) => c.name);
  return {
    create: [SITES, KEYS, USERS].map((table) => s.createTable(table, { ifNotExists: true })),
    insertSite: s.insert(SITES.name, columns(SITES)),
    site: s.select(SITES.name, ['name', 'time_zone', 'created'], ['name']),
    sites: s.select(SITES.name, ['name', 'time_zone', 'created'], [], ['name']),
    insertKey: s.insert(KEYS.name, columns(KEYS)),
    keys: s.select(KEYS.name, ['id', 'label', 'created', 'revoked'], ['site'], ['created', 'id']),
    revokeKey: s.update(KEYS.name, ['revoked'], ['site', 'id']),
    keyRevoked: s.select(KEYS.name, ['revoked'], ['id']),
    key: s.select(KEYS.name, ['site', 'salt', 'hash', 'revoked'], ['id']),
    userExists: s.exists(USERS.name, ['site', 'name']),
    insertUser: s.insert(USERS.name, columns(USERS)),
    user: s.select(USERS.name, ['salt', 'hash'], ['site', 'name']),
  };
}

export class Directory {
  private readonly sites = new Map<string, Site | null>();
  /**
   * Outcomes of checking presented credentials (undefined: not valid), by a hash of the site and what was presented,
   * oldest first: scrypt once a minute per distinct credential, not per request.
   */
  private readonly verified = new Map<
    string,
    { credential: Credential | undefined; expires: number; checked: number }
  >();
  /** Verifications under way, so that concurrent requests with the same credentials share one scrypt. */
  private readonly pending = new Map<string, Promise<Credential | undefined>>();
  private readonly ttl: number;
  private readonly sql: ReturnType<typeof directorySql>;
  /** The stored forms of a key's `revoked`. */
  private readonly revoked: SqlParam;
  private readonly active: SqlParam;

  constructor(
    private readonly driver: SqlDriver,
    options: DirectoryOptions = {},
  ) {
    this.ttl = options.credentialCacheMs ?? 60_000;
    const { statements, storage } = dialects[driver.dialect];
    this.sql = directorySql(statements);
    this.revoked = storage.encode({ type: 'Edm.Boolean' }, true)!;
    this.active = storage.encode({ type: 'Edm.Boolean' }, false)!;
  }

  async init(): Promise<void> {
    for (const sql of this.sql.create) await this.driver.run(sql);
  }

  // ── sites ──────────────────────────────────────────────────────────────────

  async createSite(name: string, options: { timeZone?: string } = {}): Promise<Site> {
    if (!SITE_NAME.test(name)) {
      throw new TenancyError(
        `Site names are lower-case letters, digits and inner hyphens (at most 63): ${JSON.stringify(name)}`,
      );
    }
    const timeZone = options.timeZone ?? 'UTC';
    try {
      new Intl.DateTimeFormat('en-US', { timeZone });
    } catch {
      throw new TenancyError(`Unknown time zone ${JSON.stringify(timeZone)}`);
    }
    if ((await this.site(name)) !== undefined) throw new TenancyError(`Site ${name} exists`);
    const site: Site = { name, timeZone, createdDate: new Date().toISOString() };
    await this.driver.run(this.sql.insertSite, [name, timeZone, site.createdDate]);
    this.sites.set(name, site);
    return site;
  }

  async site(name: string): Promise<Site | undefined> {
    if (!SITE_NAME.test(name)) return undefined;
    const cached = this.sites.get(name);
    if (cached !== undefined) return cached ?? undefined;
    const [row] = await this.driver.all(this.sql.site, [name]);
    const site =
      row === undefined
        ? null
        : { name: String(row['name']), timeZone: String(row['time_zone']), createdDate: String(row['created']) };
    // remember hits; misses only briefly (a site may be created by another process)
    if (site !== null) this.sites.set(name, site);
    return site ?? undefined;
  }

  async listSites(): Promise<Site[]> {
    const rows = await this.driver.all(this.sql.sites);
    return rows.map((r) => ({
      name: String(r['name']),
      timeZone: String(r['time_zone']),
      createdDate: String(r['created']),
    }));
  }

  // ── keys ───────────────────────────────────────────────────────────────────

  /** A new API key for a site: the only time its secret is seen. */
  async createKey(site: string, label?: string): Promise<{ id: string; key: string }> {
    if ((await this.site(site)) === undefined) throw new TenancyError(`No site ${site}`);
    const id = `k${randomBytes(6).toString('hex')}`;
    const secret = randomBytes(24).toString('base64url');
    const salt = randomBytes(16);
    const hash = await hashSecret(secret, salt);
    await this.driver.run(this.sql.insertKey, [
      id,
      site,
      label ?? null,
      salt,
      hash,
      new Date().toISOString(),
      this.active,
    ]);
    return { id, key: `${id}.${secret}` };
  }

  async listKeys(site: string): Promise<KeyInfo[]> {
    const rows = await this.driver.all(this.sql.keys, [site]);
    return rows.map((r) => ({
      id: String(r['id']),
      label: r['label'] === null ? null : String(r['label']),
      createdDate: String(r['created']),
      revoked: Boolean(Number(r['revoked']) || r['revoked'] === true),
    }));
  }

  async revokeKey(site: string, id: string): Promise<boolean> {
    const changed = await this.driver.run(this.sql.revokeKey, [this.revoked, site, id]);
    this.verified.clear(); // a revoked key stops working at once here, and within a second in other processes
    return changed > 0;
  }

  // ── users ──────────────────────────────────────────────────────────────────

  async createUser(site: string, name: string, password: string): Promise<void> {
    if ((await this.site(site)) === undefined) throw new TenancyError(`No site ${site}`);
    if (!USER_NAME.test(name)) throw new TenancyError('A user name is 1 to 40 characters without spaces or colons');
    if (password.length < 8) throw new TenancyError('A password has at least 8 characters');
    const [existing] = await this.driver.all(this.sql.userExists, [site, name]);
    if (existing !== undefined) throw new TenancyError(`Site ${site} has a user ${name} already`);
    const salt = randomBytes(16);
    const hash = await hashSecret(password, salt);
    await this.driver.run(this.sql.insertUser, [site, name, salt, hash, new Date().toISOString()]);
    this.verified.clear();
  }

  // ── authentication ─────────────────────────────────────────────────────────

  /**
   * The credential of a request to `site`, or undefined (a 401). The API_KEY header decides when present, even
   * with valid Basic credentials beside it; otherwise HTTP Basic with a user of the site.
   */
  async authenticate(
    site: string,
    apiKey: string | undefined,
    authorization: string | undefined,
  ): Promise<Credential | undefined> {
    const presented =
      apiKey !== undefined ? `key:${apiKey}` : authorization !== undefined ? `basic:${authorization}` : undefined;
    if (presented === undefined) return undefined;
    const cacheKey = sha256(`${site}\u0000${presented}`);
    const now = Date.now();
    const hit = this.verified.get(cacheKey);
    if (hit !== undefined && hit.expires > now) {
      if (hit.credential === undefined) return undefined;
      // the secret was verified recently; whether the key is still active is read again at most once a second (an
      // indexed lookup, no scrypt), so a key revoked by another process (the CLI) stops working within a second
      if (hit.credential.kind === 'key' && now - hit.checked > REVOCATION_CHECK_MS) {
        if (!(await this.keyActive(hit.credential.name))) {
          this.verified.delete(cacheKey);
          return undefined;
        }
        hit.checked = now;
      }
      // a busy credential is verified again in the background before it expires, never in a request's path
      if (hit.expires - now < this.ttl / 4 && !this.pending.has(cacheKey))
        void this.verify(cacheKey, site, apiKey, authorization);
      return hit.credential;
    }
    return this.pending.get(cacheKey) ?? this.verify(cacheKey, site, apiKey, authorization);
  }

  private verify(
    cacheKey: string,
    site: string,
    apiKey: string | undefined,
    authorization: string | undefined,
  ): Promise<Credential | undefined> {
    const work = (async () => {
      try {
        const credential =
          apiKey !== undefined ? await this.checkKey(site, apiKey) : await this.checkBasic(site, authorization!);
        this.verified.delete(cacheKey);
        if (this.ttl > 0) {
          if (this.verified.size >= MAX_VERIFIED) this.verified.delete(this.verified.keys().next().value!);
          const now = Date.now();
          this.verified.set(cacheKey, { credential, expires: now + this.ttl, checked: now });
        }
        return credential;
      } finally {
        this.pending.delete(cacheKey);
      }
    })();
    this.pending.set(cacheKey, work);
    return work;
  }

  private async keyActive(id: string): Promise<boolean> {
    const [row] = await this.driver.all(this.sql.keyRevoked, [id]);
    return row !== undefined && !(row['revoked'] === true || Number(row['revoked']) === 1);
  }

  private async checkKey(site: string, key: string): Promise<Credential | undefined> {
    const dot = key.indexOf('.');
    const id = dot < 0 ? '' : key.slice(0, dot);
    const secret = dot < 0 ? key : key.slice(dot + 1);
    const [row] = id === '' || id.length > 40 ? [] : await this.driver.all(this.sql.key, [id]);
    const known = row !== undefined;
    const ok = await verifySecret(
      secret,
      known ? Buffer.from(row['salt'] as Uint8Array) : DUMMY_SALT,
      known ? Buffer.from(row['hash'] as Uint8Array) : DUMMY_HASH,
    );
    const revoked = known && (row['revoked'] === true || Number(row['revoked']) === 1);
    // another site's key is as good as no key (401), and so is a revoked one
    return ok && known && !revoked && row['site'] === site ? { site, kind: 'key', name: id } : undefined;
  }

  private async checkBasic(site: string, authorization: string): Promise<Credential | undefined> {
    const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(authorization);
    const decoded = match === null ? '' : Buffer.from(match[1]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    const name = colon < 0 ? '' : decoded.slice(0, colon);
    const password = colon < 0 ? '' : decoded.slice(colon + 1);
    const [row] = name === '' || name.length > 40 ? [] : await this.driver.all(this.sql.user, [site, name]);
    const known = row !== undefined;
    const ok = await verifySecret(
      password,
      known ? Buffer.from(row['salt'] as Uint8Array) : DUMMY_SALT,
      known ? Buffer.from(row['hash'] as Uint8Array) : DUMMY_HASH,
    );
    return ok && known ? { site, kind: 'user', name } : undefined;
  }
}

/**
 * SHA-256 of a text, in base64: the credential cache's key, so that no secret is kept in memory as it was sent.
 * `crypto.hash` (Node 20.12 and later) costs a quarter of `createHash` (0.2 µs against 0.74), once per request.
 */
const oneShotHash = (crypto as { hash?: (algorithm: string, data: string, encoding: 'base64') => string }).hash;
function sha256(text: string): string {
  return oneShotHash !== undefined
    ? oneShotHash('sha256', text, 'base64')
    : createHash('sha256').update(text).digest('base64');
}
