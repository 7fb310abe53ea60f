import type { ApiToken } from './api-token';

/** An answer of the api that is not 2xx, as `{code, message, details?}` (docs/api.md, "Errors"). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  /** A route this api does not have (an older api than the console, or a feature not built yet). */
  get routeMissing(): boolean {
    return this.status === 404 && this.code === 'route_not_found';
  }
}

/** `/api/runs/a%2Fb/…`: every segment encoded, so an id can never change the path. */
export function apiPath(...segments: (string | number)[]): string {
  return '/api/' + segments.map((s) => encodeURIComponent(String(s))).join('/');
}

export type Query = Record<string, string | number | undefined>;

export function withQuery(path: string, query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined && value !== '') params.set(key, String(value));
  const search = params.toString();
  return search ? `${path}?${search}` : path;
}

/**
 * REST calls to the api that serves the console (same origin), with the
 * bearer token when one is set. A 401 tells `onUnauthorized`, which asks the
 * operator for the token again.
 */
export class ApiClient {
  constructor(
    private readonly token: ApiToken,
    private readonly onUnauthorized: () => void = () => undefined,
  ) {}

  get<T>(path: string, query?: Query): Promise<T> {
    return this.request<T>('GET', withQuery(path, query));
  }

  post<T>(path: string, body: unknown): Promise<T> {
    return this.request<T>('POST', path, body);
  }

  delete(path: string): Promise<void> {
    return this.request<void>('DELETE', path);
  }

  /** A file (an artifact) with the token, for a download link that cannot carry a header itself. */
  async blob(path: string): Promise<Blob> {
    const res = await this.send('GET', path);
    return res.blob();
  }

  /** Headers for a request; also used to open the WebSocket's URL. */
  authorization(): Record<string, string> {
    const token = this.token.get();
    return token ? { Authorization: `Bearer ${token}` } : {};
  }

  private async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await this.send(method, path, body);
    if (res.status === 204) return undefined as T;
    return (await res.json()) as T;
  }

  private async send(method: string, path: string, body?: unknown): Promise<Response> {
    const headers: Record<string, string> = { Accept: 'application/json', ...this.authorization() };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    let res: Response;
    try {
      res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'omit' });
    } catch {
      throw new ApiError(0, 'network_error', 'The api did not answer. Is it running? Check the connection and try again.');
    }
    if (res.ok) return res;
    const error = await errorOf(res);
    if (error.status === 401) this.onUnauthorized();
    throw error;
  }
}

async function errorOf(res: Response): Promise<ApiError> {
  try {
    const body = (await res.json()) as { code?: unknown; message?: unknown; details?: unknown };
    if (typeof body.code === 'string' && typeof body.message === 'string') return new ApiError(res.status, body.code, body.message, body.details);
  } catch {
    // Not JSON: a proxy page or an empty body.
  }
  return new ApiError(res.status, `http_${res.status}`, `The api answered ${res.status} ${res.statusText}.`);
}
