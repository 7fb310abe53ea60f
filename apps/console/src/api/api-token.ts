const KEY = 'stageflow.apiToken';

/**
 * The api's bearer token, kept in sessionStorage: it lives as long as the tab
 * and never reaches disk the way localStorage would.
 */
export class ApiToken {
  constructor(private readonly storage: Storage = sessionStorage) {}

  get(): string | undefined {
    return this.storage.getItem(KEY) ?? undefined;
  }

  set(token: string): void {
    this.storage.setItem(KEY, token);
  }

  clear(): void {
    this.storage.removeItem(KEY);
  }
}
