/**
 * Links a person or a model is sent to, built from the deployment's own URL
 * (the `TASKS_PUBLIC_URL` setting: the stack sets the HTTP API's URL, the
 * local stack its own), never from a request's `Host` header, which a client
 * chooses.
 */
export class DeploymentLinks {
  readonly #base: () => string | undefined;

  /**
   * `baseUrl`: `https://…` or `http://…`, trailing slashes ignored;
   * `undefined` when the deployment's URL is not known. A function is read
   * at each use: the local stack knows its URL only once it listens, after
   * the functions are composed.
   */
  constructor(baseUrl: string | undefined | (() => string | undefined)) {
    this.#base = typeof baseUrl === 'function' ? () => trimmed(baseUrl()) : () => trimmed(baseUrl);
  }

  /** The MCP endpoint, `<base>/mcp`. */
  get endpoint(): string | undefined {
    return this.#under('/mcp');
  }

  /** The deployment's origin (`scheme://host[:port]`): where the console's forms must come from. */
  get origin(): string | undefined {
    const base = this.#base();
    return base === undefined ? undefined : new URL(base).origin;
  }

  /** The console's list of a person's tasks, `<base>/console`. */
  get console(): string | undefined {
    return this.#under(CONSOLE_PATH);
  }

  /** Where the identity provider sends a person back after signing in to the console, `<base>/console/callback`. */
  get consoleCallback(): string | undefined {
    return this.#under(`${CONSOLE_PATH}/callback`);
  }

  /** A task's page in the console, `<base>/console/tasks/<id>` (the id percent-encoded). */
  taskPage(taskId: string): string | undefined {
    return this.#under(taskPagePath(taskId));
  }

  /** A callback's URL, `<base>/callbacks/<token>` (the token is the capability: never logged or stored). */
  callback(token: string): string | undefined {
    return this.#under(`${CALLBACKS_PATH}/${token}`);
  }

  #under(path: string): string | undefined {
    const base = this.#base();
    return base === undefined ? undefined : `${base}${path}`;
  }
}

/** The path callbacks are completed under, on the endpoint's origin. */
export const CALLBACKS_PATH = '/callbacks';

/** The path the console is served under, on the endpoint's origin. */
export const CONSOLE_PATH = '/console';

/** A task page's path, `/console/tasks/<id>`: what the console links to within itself, and what {@link DeploymentLinks.taskPage} prefixes. */
export function taskPagePath(taskId: string): string {
  return `${CONSOLE_PATH}/tasks/${encodeURIComponent(taskId)}`;
}

function trimmed(base: string | undefined): string | undefined {
  return base?.replace(/\/+$/, '');
}
