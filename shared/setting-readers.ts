/**
 * How a setting of `SETTINGS` (`config.ts`) reads its variable: required or
 * optional strings, lists, durations and counts with a default, origins. A
 * bad value throws at start, naming the variable.
 */
import { list } from './auth/settings.ts';

/** One setting: its variable and how it reads (what the docs say of it: `config-docs.ts`). */
export interface Setting<E extends string = string, T = unknown> {
  readonly env: E;
  /** Reads the raw value (`undefined` when unset); a bad value throws, naming the variable. */
  readonly read: (raw: string | undefined) => T;
}

/** A numeric setting with a default, part of {@link TaskSettings}. */
export interface Numeric<E extends string> extends Setting<E, number> {
  readonly fallback: number;
}

export function required<E extends string>(env: E): Setting<E, string> {
  return {
    env,
    read: (raw) => {
      if (!raw) throw new Error(`Missing required environment variable ${env}`);
      return raw;
    },
  };
}

export function optional<E extends string>(env: E): Setting<E, string | undefined> {
  return { env, read: (raw) => raw || undefined };
}

export function listed<E extends string>(env: E): Setting<E, string[]> {
  return { env, read: list };
}

/** A duration in milliseconds; its variable ends in `_MS`, which is how the docs know to show the default as a duration. */
export function duration<E extends `${string}_MS`>(env: E, fallback: number): Numeric<E> {
  return { env, fallback, read: (raw) => positiveInt(env, raw, fallback) };
}

export function count<E extends string>(env: E, fallback: number): Numeric<E> {
  return { env, fallback, read: (raw) => positiveInt(env, raw, fallback) };
}

export function positiveInt(env: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`${env} must be a positive integer, got "${raw}"`);
  return value;
}

/** Whether `value` is an origin, `scheme://host[:port]` exactly as browsers send it. */
export function isOrigin(value: string): boolean {
  return URL.canParse(value) && new URL(value).origin === value;
}

/** A comma-separated list of {@link isOrigin origins}. */
export function origins(raw: string | undefined): string[] {
  const entries = (raw ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  for (const entry of entries) {
    if (!isOrigin(entry)) {
      throw new Error(`TASKS_ALLOWED_ORIGINS must list origins like https://app.example.com, got "${entry}"`);
    }
  }
  return entries;
}
