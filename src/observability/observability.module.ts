import { Global, Module } from '@nestjs/common';
import { MetricsEndpoint } from './metrics-endpoint.js';
import { Metrics } from './metrics.js';
import { Tracing } from './tracing.js';

/** Prometheus metrics and OpenTelemetry traces, both off unless configured; any module may record into them. */
@Global()
@Module({
  providers: [Metrics, Tracing, MetricsEndpoint],
  exports: [Metrics, Tracing],
})
export class ObservabilityModule {}
