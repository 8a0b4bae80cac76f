export * from './errors';
export * from './credentials';
export * from './logger';
export * from './values';
export * from './backoff';
export * from './version';
