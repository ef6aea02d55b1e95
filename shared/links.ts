/**
 * Links a person or a model is sent to, built from the deployment's own URL
 * (the `TASKS_PUBLIC_URL` setting: the stack sets the HTTP API's URL, the
 * local stack its own), never from a request's `Host` header, which a client
 * chooses.
 */
export class DeploymentLinks {
  readonly #base: string | undefined;

  /** `baseUrl`: `https://…` or `http://…`, without a trailing slash; `undefined` when the deployment's URL is not known. */
  constructor(baseUrl: string | undefined) {
    this.#base = baseUrl?.replace(/\/+$/, '');
  }

  /** The MCP endpoint, `<base>/mcp`. */
  get endpoint(): string | undefined {
    return this.#base === undefined ? undefined : `${this.#base}/mcp`;
  }

  /** A task's page in the console, `<base>/console/tasks/<id>` (the id escaped as a path segment). */
  taskPage(taskId: string): string | undefined {
    return this.#base === undefined ? undefined : `${this.#base}/console/tasks/${encodeURIComponent(taskId)}`;
  }
}
