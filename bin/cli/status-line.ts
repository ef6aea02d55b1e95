/**
 * The line that shows a followed task's state: on a terminal, one live line
 * (spinner, status, message, elapsed time) redrawn a few times a second at
 * most; elsewhere a plain line each time the state changes.
 */
import ora, { type Ora } from 'ora';
import type { DetailedTask } from '../../shared/protocol/wire-types.ts';

/** The live line's redraw interval: at most four redraws a second, whatever the task or the terminal does. */
const REDRAW_MS = 250;

/** How often the elapsed time in the live line moves on. */
const TICK_MS = 1000;

/** Where the line is drawn: standard error, or a stream a test gives. */
interface StatusStream extends NodeJS.WritableStream {
  isTTY?: boolean;
  columns?: number;
}

export class StatusLine {
  readonly #started = Date.now();
  #spinner: Ora | undefined;
  #timer: NodeJS.Timeout | undefined;
  #text = '';
  #lastLine = '';
  #ended = false;

  /**
   * @param enabled `false` (`--json`): nothing is shown.
   * @param live `true`: a live line on a terminal with a size; `false`: plain lines.
   */
  constructor(
    private readonly taskId: string,
    private readonly enabled: boolean,
    private readonly live: boolean,
    private readonly stream: StatusStream = process.stderr,
  ) {
    this.resume();
  }

  /** Shows the task's state: its status and the server's message, or `text` instead. */
  update(task: DetailedTask, text?: string): void {
    if (this.#ended) return;
    this.#text = text ?? `${task.status}${task.statusMessage ? `: ${task.statusMessage}` : ''}`;
    if (!this.enabled) return;
    if (this.live) {
      this.#render();
      return;
    }
    if (this.#text !== this.#lastLine) this.stream.write(`[${this.taskId}] ${this.#text}\n`);
    this.#lastLine = this.#text;
  }

  /** Clears the live line (e.g. while a prompt asks something); `resume` draws it again. */
  pause(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    this.#spinner?.stop();
    this.#spinner = undefined;
  }

  resume(): void {
    if (!this.enabled || !this.live || this.#spinner || this.#ended) return;
    this.#spinner = ora({ stream: this.stream, discardStdin: false, interval: REDRAW_MS }).start();
    this.#render();
    this.#timer = setInterval(() => this.#render(), TICK_MS);
  }

  /** Clears the line for good: the task ended, or following it did. Nothing is drawn after this. */
  stop(): void {
    this.#ended = true;
    this.pause();
  }

  /** Sets the spinner's text; the spinner draws it at its next frame (it redraws every {@link REDRAW_MS}). */
  #render(): void {
    if (!this.#spinner) return;
    const text = this.#text || 'starting';
    const elapsed = ` (${Math.round((Date.now() - this.#started) / 1000)}s)`;
    // One line, never wrapped: the spinner's glyph and a space take two columns, and one is kept free.
    const room = Math.max(10, (this.stream.columns ?? 80) - 3 - elapsed.length);
    this.#spinner.text = `${text.length > room ? `${text.slice(0, room - 1)}…` : text}${elapsed}`;
  }
}
