import type { ServiceConfig } from '@stageflow/config';

/** `ServiceConfig['browser']`: Chromium path, host id, displays, temp and runtime dirs. */
export type BrowserSettings = ServiceConfig['browser'];

/** Nest token for {@link BrowserSettings}. */
export const BROWSER_SETTINGS = Symbol('BROWSER_SETTINGS');
/** Nest token for the Host config (`HostConfig` of `@stageflow/host-config`), loaded once at boot. */
export const HOST_CONFIG = Symbol('HOST_CONFIG');
/** Nest token for the owner scope this Host serves (a string; `local` today). Never from YAML or a request. */
export const OWNER_SCOPE = Symbol('OWNER_SCOPE');
