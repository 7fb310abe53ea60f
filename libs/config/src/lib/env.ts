import { homedir } from 'node:os';
import { join } from 'node:path';
import { StageflowError } from '@stageflow/contracts';

export type Env = Record<string, string | undefined>;

/** A configuration problem found at boot; the process refuses to start and prints every problem. */
export class ConfigError extends StageflowError {
  constructor(readonly problems: string[]) {
    super('config_invalid', `Stageflow cannot start, its configuration is invalid:\n- ${problems.join('\n- ')}`, 500, {
      problems,
    });
  }
}

/** Collects problems while reading variables, so one boot reports all of them. */
export class EnvReader {
  readonly problems: string[] = [];
  constructor(private readonly env: Env) {}

  string(name: string, fallback: string): string {
    const v = this.env[name];
    return v === undefined || v === '' ? fallback : v;
  }

  optional(name: string): string | undefined {
    const v = this.env[name];
    return v === undefined || v === '' ? undefined : v;
  }

  int(name: string, fallback: number, min: number, max: number): number {
    const raw = this.env[name];
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (!/^-?\d+$/.test(raw.trim()) || n < min || n > max) {
      this.problems.push(`${name}="${raw}" must be an integer from ${min} to ${max}`);
      return fallback;
    }
    return n;
  }

  oneOf<T extends string>(name: string, fallback: T, allowed: readonly T[]): T {
    const raw = this.env[name];
    if (raw === undefined || raw === '') return fallback;
    if (!(allowed as readonly string[]).includes(raw)) {
      this.problems.push(`${name}="${raw}" must be one of: ${allowed.join(', ')}`);
      return fallback;
    }
    return raw as T;
  }

  url(name: string, fallback: string, protocols: string[]): string {
    const raw = this.string(name, fallback);
    try {
      const u = new URL(raw);
      if (!protocols.includes(u.protocol)) throw new Error('protocol');
    } catch {
      this.problems.push(`${name}="${raw}" must be a URL starting with ${protocols.map((p) => `${p}//`).join(' or ')}`);
    }
    return raw;
  }

  done(): void {
    if (this.problems.length) throw new ConfigError(this.problems);
  }
}

export function defaultHome(env: Env): string {
  return env['STAGEFLOW_HOME'] || join(homedir(), '.stageflow');
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
