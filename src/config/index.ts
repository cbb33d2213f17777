/** The configuration outside its folder: the validated settings and how they are read from an environment. */
export { ConfigModule } from './config.module.js';
export { AppConfig, InvalidConfigError, loadConfig } from './app-config.js';
