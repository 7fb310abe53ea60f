export * from './lib/states';
export * from './lib/errors';
export * from './lib/keys';
export * from './lib/queues';
export * from './lib/records';
export * from './lib/events';
export * from './lib/browser-sessions';
export * from './lib/artifacts';
