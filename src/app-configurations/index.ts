/** What the app-configurations module offers outside it (the benchmarks build rows with these, nothing deeper). */
export { AppConfigurationsModule } from './app-configurations.module.js';
export { AppConfigurationEntity } from './app-configuration.entity.js';
