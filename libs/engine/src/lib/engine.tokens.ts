/** Internal injection tokens of the engine module. */
export const ENGINE_REDIS_CONFIG = Symbol('ENGINE_REDIS_CONFIG');
export const ENGINE_OPTIONS = Symbol('ENGINE_OPTIONS');
