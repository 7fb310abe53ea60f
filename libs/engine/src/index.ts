export * from './lib/engine.api';
