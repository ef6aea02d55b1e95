/**
 * Where `mcp-tasks login` keeps its tokens: one file per user, only they can
 * read (mode 0600), the logins by endpoint URL.
 */
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { TasksError } from '../../shared/errors.ts';

/** What is kept per endpoint. */
export interface StoredLogin {
  resource: string;
  issuer: string;
  tokenEndpoint: string;
  clientId: string;
  grant: 'authorization_code' | 'client_credentials';
  scope?: string;
  accessToken: string;
  refreshToken?: string;
  /** Seconds since the epoch; absent when the server did not say. */
  expiresAt?: number;
}

export class LoginError extends TasksError {
  override name = 'LoginError';
}

/** `$MCP_TASKS_CONFIG_DIR`, else `$XDG_CONFIG_HOME/mcp-tasks`, else `~/.config/mcp-tasks`. */
function configDir(env: Record<string, string | undefined> = process.env): string {
  return env['MCP_TASKS_CONFIG_DIR'] || join(env['XDG_CONFIG_HOME'] || join(homedir(), '.config'), 'mcp-tasks');
}

/** Logins by endpoint URL, in `<configDir>/logins.json` (mode 0600). */
export class LoginStore {
  constructor(readonly file: string = join(configDir(), 'logins.json')) {}

  async all(): Promise<Record<string, StoredLogin>> {
    try {
      return JSON.parse(await readFile(this.file, 'utf8')) as Record<string, StoredLogin>;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
      throw new LoginError(`Cannot read ${this.file}: ${(error as Error).name}`);
    }
  }

  async get(endpoint: string): Promise<StoredLogin | undefined> {
    return (await this.all())[endpoint];
  }

  async put(endpoint: string, login: StoredLogin): Promise<void> {
    await this.#write({ ...(await this.all()), [endpoint]: login });
  }

  async remove(endpoint: string): Promise<boolean> {
    const all = await this.all();
    if (!(endpoint in all)) return false;
    delete all[endpoint];
    await this.#write(all);
    return true;
  }

  async #write(all: Record<string, StoredLogin>): Promise<void> {
    await mkdir(dirname(this.file), { recursive: true, mode: 0o700 });
    const temporary = `${this.file}.${process.pid}.tmp`;
    await writeFile(temporary, `${JSON.stringify(all, null, 2)}\n`, { mode: 0o600 });
    await chmod(temporary, 0o600);
    await rename(temporary, this.file);
  }
}
