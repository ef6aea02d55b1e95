/**
 * What the local authorization server keeps on disk, under `<dataDir>/auth`,
 * so a sign-in lasts across restarts of the stack: its signing key (JWKS) and
 * cookie keys (`keys.json`), and every record `oidc-provider` stores
 * (registered clients, grants, sessions, refresh tokens, authorization codes,
 * interactions…), one file per record under a folder per model.
 *
 * The folder is the user's only (mode 0700, files 0600: it holds private keys
 * and token records); every file is written whole to a temporary name and
 * renamed into place, so a crash leaves the previous version or the new one.
 * A record's file name is a hash of its id (token ids are token values). An
 * expired record is gone: never returned, deleted when met and at start.
 * Deleting the folder signs everyone out and makes new keys.
 *
 * One stack uses a data directory at a time (`lockDataDir`), so there is one
 * writer. Local development only: never part of a Lambda bundle.
 */

import { createHash, randomBytes } from 'node:crypto';
import { chmod, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { exportJWK, generateKeyPair } from 'jose';

/** A record as `oidc-provider` hands it to its adapter. */
export type AdapterPayload = Record<string, unknown>;

/** The keys the provider signs tokens and cookies with. */
export interface AuthKeys {
  /** The private signing keys, as the provider's `jwks` option takes them. */
  jwks: { keys: Record<string, unknown>[] };
  /** The provider's `cookies.keys`. */
  cookieKeys: string[];
}

/** The authorization server's kept state: its keys and a factory of adapters, one per model. */
export interface AuthState {
  keys: AuthKeys;
  adapter: (model: string) => FileAdapter;
}

/** One record's file: the payload and when it expires (epoch ms; absent: never). */
interface StoredRecord {
  payload: AdapterPayload;
  expiresAt?: number;
}

const KEYS_FILE = 'keys.json';
const RECORD_SUFFIX = '.json';
const TEMPORARY_SUFFIX = '.tmp';

/**
 * Opens (making it on first use) the state under `dir`: loads the keys, or
 * makes and keeps new ones, and deletes the records that expired while the
 * stack was stopped.
 */
export async function openAuthState(dir: string, now: () => number = Date.now): Promise<AuthState> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  // A folder made by hand, or by an older version, is made the user's only.
  await chmod(dir, 0o700);
  const keys = await loadOrMakeKeys(dir);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) await new FileAdapter(dir, entry.name, now).prune();
  }
  return { keys, adapter: (model) => new FileAdapter(dir, model, now) };
}

/** Fresh keys: an ES256 signing key and a cookie key (what a server without a kept state uses at every start). */
export async function newAuthKeys(): Promise<AuthKeys> {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const signingKey = { ...(await exportJWK(privateKey)), alg: 'ES256', use: 'sig', kid: randomBytes(8).toString('hex') };
  return { jwks: { keys: [signingKey] }, cookieKeys: [randomBytes(32).toString('hex')] };
}

async function loadOrMakeKeys(dir: string): Promise<AuthKeys> {
  const file = join(dir, KEYS_FILE);
  const kept = await readJson<AuthKeys>(file);
  if (kept) return kept;
  const keys = await newAuthKeys();
  await writeAtomically(file, keys);
  return keys;
}

/**
 * `oidc-provider`'s adapter for one model (`Client`, `Grant`, `Session`,
 * `RefreshToken`…), over the files in `<dir>/<model>/`. Lookups by a field
 * other than the id (`findByUid`, `findByUserCode`, `revokeByGrantId`) read
 * the model's folder: a local server holds few records.
 */
export class FileAdapter {
  readonly #dir: string;
  readonly #now: () => number;

  constructor(root: string, model: string, now: () => number = Date.now) {
    this.#dir = join(root, model);
    this.#now = now;
  }

  /** Stores the record, expiring `expiresIn` seconds from now (never, without it). */
  async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
    const expiresAt = typeof expiresIn === 'number' ? this.#now() + expiresIn * 1000 : undefined;
    await this.#write(id, { payload, ...(expiresAt !== undefined ? { expiresAt } : {}) });
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    return (await this.#read(this.#file(id)))?.payload;
  }

  /** The session whose `uid` is `uid`. */
  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    return this.#findBy((payload) => payload['uid'] === uid);
  }

  /** The device code whose `userCode` is `userCode`. */
  async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
    return this.#findBy((payload) => payload['userCode'] === userCode);
  }

  /** Marks the record used (a code is good once): `consumed`, in epoch seconds; its expiry is kept. */
  async consume(id: string): Promise<void> {
    const record = await this.#read(this.#file(id));
    if (!record) return;
    await this.#write(id, { ...record, payload: { ...record.payload, consumed: Math.floor(this.#now() / 1000) } });
  }

  async destroy(id: string): Promise<void> {
    await rm(this.#file(id), { force: true });
  }

  /** Deletes every record of this model that belongs to the grant. */
  async revokeByGrantId(grantId: string): Promise<void> {
    for (const { file, payload } of await this.#records()) {
      if (payload['grantId'] === grantId) await rm(file, { force: true });
    }
  }

  /**
   * Deletes the expired records (reading them does), and the temporary files
   * a crash left behind. Only while nothing writes: at start.
   */
  async prune(): Promise<void> {
    for (const name of await this.#names()) {
      if (name.startsWith('.') && name.endsWith(TEMPORARY_SUFFIX)) await rm(join(this.#dir, name), { force: true });
    }
    await this.#records();
  }

  async #findBy(match: (payload: AdapterPayload) => boolean): Promise<AdapterPayload | undefined> {
    return (await this.#records()).find((record) => match(record.payload))?.payload;
  }

  /** The model's live records (temporary files, whose names start with a dot, are not records). */
  async #records(): Promise<{ file: string; payload: AdapterPayload }[]> {
    const records: { file: string; payload: AdapterPayload }[] = [];
    for (const name of await this.#names()) {
      if (name.startsWith('.') || !name.endsWith(RECORD_SUFFIX)) continue;
      const file = join(this.#dir, name);
      const record = await this.#read(file);
      if (record) records.push({ file, payload: record.payload });
    }
    return records;
  }

  /** The names in the model's folder (none before its first record). */
  async #names(): Promise<string[]> {
    try {
      return await readdir(this.#dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
  }

  /** The record in `file`, unless it is absent or expired (an expired one is deleted). */
  async #read(file: string): Promise<StoredRecord | undefined> {
    const record = await readJson<StoredRecord>(file);
    if (record?.expiresAt !== undefined && record.expiresAt <= this.#now()) {
      await rm(file, { force: true });
      return undefined;
    }
    return record;
  }

  async #write(id: string, record: StoredRecord): Promise<void> {
    await mkdir(this.#dir, { recursive: true, mode: 0o700 });
    await writeAtomically(this.#file(id), record);
  }

  #file(id: string): string {
    return join(this.#dir, `${createHash('sha256').update(id).digest('hex')}${RECORD_SUFFIX}`);
  }
}

/** The JSON in `file`, or `undefined` when there is no such file. */
async function readJson<T>(file: string): Promise<T | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  return JSON.parse(text) as T;
}

/** Writes `value` as JSON to a temporary file (mode 0600) beside `file`, then renames it into place. */
async function writeAtomically(file: string, value: unknown): Promise<void> {
  const temporary = join(dirname(file), `.${basename(file)}.${randomBytes(6).toString('hex')}${TEMPORARY_SUFFIX}`);
  try {
    await writeFile(temporary, JSON.stringify(value), { mode: 0o600, flag: 'wx' });
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}
