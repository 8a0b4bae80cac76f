export * from './catalog';
export * from './server-error';
