/**
 * `npm run bench:metrics-cost`: the CPU time the metrics add to one execute request, the recording calls
 * alone (the HTTP histogram, the execution counter, the upstream histogram), with metrics on and off, in
 * alternating rounds. An end-to-end comparison (bench:execute with BENCH_VARIANT_ENV) cannot resolve a few µs
 * on a loaded 2-core machine; this can.
 */
import { loadConfig } from '../src/config/app-config.js';
import { Metrics } from '../src/observability/metrics.js';

const CALLS = 500_000;

function perRequest(metrics: Metrics): void {
  metrics.httpRequest('POST', '/v1/functions/:function_name/execute', 200, 0.0021);
  metrics.execution('BENCH', 'api_key', true);
  metrics.upstreamCall('BENCH', '2xx', 0.0009);
}

const variants = { on: new Metrics(loadConfig({ METRICS_PORT: '0' })), off: new Metrics(loadConfig({})) };
const results: Record<string, number[]> = { on: [], off: [] };
for (let round = 0; round < 3; round += 1) {
  for (const [label, metrics] of Object.entries(variants)) {
    for (let i = 0; i < CALLS / 10; i += 1) {
      perRequest(metrics);
    }
    const before = process.cpuUsage();
    for (let i = 0; i < CALLS; i += 1) {
      perRequest(metrics);
    }
    const spent = process.cpuUsage(before);
    results[label].push(Math.round(((spent.user + spent.system) / CALLS) * 1000) / 1000);
  }
}
process.stdout.write(
  `${JSON.stringify({ benchmark: 'metrics-cost', cpu_us_per_request_by_round: results, target_us: 5 }, null, 2)}\n`,
);
