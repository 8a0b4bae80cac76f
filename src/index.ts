/**
 * The package root is the SDK: `import { Worker, Client } from 'zdmatch'`.
 * The server is started through the CLI, not imported from here.
 */
export * from './sdk/worker';
export * from './sdk/client';
export * from './sdk/common';
export * from './sdk/fetch';
