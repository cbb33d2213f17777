/** Metrics and traces outside their folder. */
export { ObservabilityModule } from './observability.module.js';
export { Metrics } from './metrics.js';
