export { Client, type ClientOptions } from './client';
export { RpcFailedError } from './errors';
export * from './types';
