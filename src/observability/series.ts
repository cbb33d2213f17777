import type { Registry } from 'prom-client';

/**
 * Counters and histograms whose numbers live in plain maps, exposed through prom-client's registry (which
 * formats them, text or OpenMetrics, with the rest). Why not prom-client's own Counter and Histogram on the
 * hot path: each `labels(…).inc()` or `.observe()` validates the labels and hashes them into a string again,
 * 1–3 µs a call measured on the 2-core machine (1,000,000 calls, `labels('POST', route, '200').observe(x)`),
 * and an execution records five of them; with these classes a call is a string key and a map lookup (about
 * 0.1 µs), so that metrics on cost an execution under the 5 µs budget of docs/operations.md. The series a
 * label set makes is created on its first use, as prom-client does; label values are bounded by the callers.
 */
interface Series<T> {
  labels: Record<string, string>;
  state: T;
}

abstract class LabelledMetric<T> {
  private readonly series = new Map<string, Series<T>>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labelNames: readonly string[],
    registry: Registry,
  ) {
    registry.registerMetric(this as never);
  }

  /** A metric without labels is one series, shown (at zero) before its first use, as prom-client shows it. */
  protected init(): void {
    if (this.labelNames.length === 0) {
      this.state([]);
    }
  }

  protected state(values: readonly string[]): T {
    const key = values.length === 1 ? values[0] : values.join('\u0001');
    let series = this.series.get(key);
    if (!series) {
      const labels: Record<string, string> = {};
      this.labelNames.forEach((name, index) => (labels[name] = values[index]));
      series = { labels, state: this.create() };
      this.series.set(key, series);
    }
    return series.state;
  }

  protected all(): IterableIterator<Series<T>> {
    return this.series.values();
  }

  protected abstract create(): T;

  /** What prom-client's registry reads when scraped. */
  abstract get(): { name: string; help: string; type: string; values: object[]; aggregator: 'sum' };

  reset(): void {
    this.series.clear();
  }
}

export class FastCounter extends LabelledMetric<{ value: number }> {
  readonly type = 'counter';

  inc(...values: string[]): void {
    this.state(values).value += 1;
  }

  constructor(name: string, help: string, labelNames: readonly string[], registry: Registry) {
    super(name, help, labelNames, registry);
    this.init();
  }

  protected create(): { value: number } {
    return { value: 0 };
  }

  get() {
    const values = [...this.all()].map(({ labels, state }) => ({ labels, value: state.value }));
    return { name: this.name, help: this.help, type: this.type, values, aggregator: 'sum' as const };
  }
}

interface HistogramState {
  /** Observations per bucket (not cumulative); the last one is +Inf. */
  counts: Float64Array;
  sum: number;
  count: number;
}

export class FastHistogram extends LabelledMetric<HistogramState> {
  readonly type = 'histogram';

  constructor(
    name: string,
    help: string,
    labelNames: readonly string[],
    private readonly buckets: readonly number[],
    registry: Registry,
  ) {
    super(name, help, labelNames, registry);
    this.init();
  }

  observe(seconds: number, ...values: string[]): void {
    const state = this.state(values);
    let index = 0;
    while (index < this.buckets.length && seconds > this.buckets[index]) {
      index += 1;
    }
    state.counts[index] += 1;
    state.sum += seconds;
    state.count += 1;
  }

  protected create(): HistogramState {
    return { counts: new Float64Array(this.buckets.length + 1), sum: 0, count: 0 };
  }

  get() {
    const values: object[] = [];
    for (const { labels, state } of this.all()) {
      let cumulative = 0;
      this.buckets.forEach((bound, index) => {
        cumulative += state.counts[index];
        values.push({ labels: { ...labels, le: bound }, value: cumulative, metricName: `${this.name}_bucket` });
      });
      values.push({ labels: { ...labels, le: '+Inf' }, value: state.count, metricName: `${this.name}_bucket` });
      values.push({ labels, value: state.sum, metricName: `${this.name}_sum` });
      values.push({ labels, value: state.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: 'sum' as const };
  }
}
