export { loadConfig, ConfigError, type Config, type LoadOptions } from './load';
export { parseDuration } from './formats';
export { configWarnings } from './warnings';
