export * from './catalog';
export * from './server-error';
export * from './store-unavailable';
