/**
 * Counters and histograms kept as plain numbers, one record per label set, that a prom-client
 * registry reads when Prometheus scrapes. prom-client's own metrics hash their labels on every
 * observation, labelled children included, a measurable share of a cache hit (bench/results.md,
 * "Findings"); fastify-metrics works the same way, and its current major needs Node 22.
 * Here a caller looks its series up once (or keeps it) and then only adds.
 */
import type { Registry } from 'prom-client'

/** What prom-client's registry reads from a metric when it formats the exposition. */
interface Exposition {
  name: string
  help: string
  type: 'counter' | 'histogram'
  aggregator: 'sum'
  values: Array<{ metricName?: string, labels: Record<string, string | number>, value: number }>
}

type Labels<L extends string> = Record<L, string>

abstract class Family<L extends string, S> {
  /** One Map level per label, so that a lookup builds no key string. */
  readonly #index = new Map<string, unknown>()
  readonly #entries: Array<{ labels: Labels<L>, series: S }> = []

  constructor (
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly L[],
    registry: Registry
  ) {
    // prom-client calls get() (and, on reset, reset()) on whatever is registered.
    registry.registerMetric(this as never)
  }

  /** The series of these label values (in `labelNames` order), made on first use. */
  series (...values: string[]): S {
    const last = this.labelNames.length - 1
    let level = this.#index
    for (let i = 0; i < last; i++) {
      const value = values[i] ?? ''
      let next = level.get(value) as Map<string, unknown> | undefined
      if (next === undefined) level.set(value, next = new Map())
      level = next
    }
    const value = values[last] ?? ''
    let series = level.get(value) as S | undefined
    if (series === undefined) {
      const labels = Object.fromEntries(this.labelNames.map((name, index) => [name, values[index] ?? ''])) as Labels<L>
      series = this.create()
      level.set(value, series)
      this.#entries.push({ labels, series })
    }
    return series
  }

  reset (): void {
    this.#index.clear()
    this.#entries.length = 0
  }

  protected entries (): Iterable<{ labels: Labels<L>, series: S }> {
    return this.#entries
  }

  protected abstract create (): S
}

export class CounterFamily<L extends string> extends Family<L, { value: number }> {
  protected create (): { value: number } {
    return { value: 0 }
  }

  inc (...values: string[]): void {
    this.series(...values).value++
  }

  get (): Exposition {
    return {
      name: this.name,
      help: this.help,
      type: 'counter',
      aggregator: 'sum',
      values: [...this.entries()].map(({ labels, series }) => ({ labels, value: series.value })),
    }
  }
}

export interface HistogramSeries {
  /** Per bucket (the last one is +Inf), not cumulative. */
  counts: Float64Array
  sum: number
  count: number
}

export class HistogramFamily<L extends string> extends Family<L, HistogramSeries> {
  readonly #buckets: readonly number[]

  constructor (name: string, help: string, labelNames: readonly L[], buckets: readonly number[], registry: Registry) {
    super(name, help, labelNames, registry)
    this.#buckets = buckets
  }

  protected create (): HistogramSeries {
    return { counts: new Float64Array(this.#buckets.length + 1), sum: 0, count: 0 }
  }

  observe (series: HistogramSeries, value: number): void {
    let bucket = 0
    while (bucket < this.#buckets.length && value > (this.#buckets[bucket] as number)) bucket++
    series.counts[bucket] = (series.counts[bucket] as number) + 1
    series.sum += value
    series.count++
  }

  get (): Exposition {
    const values: Exposition['values'] = []
    for (const { labels, series } of this.entries()) {
      let cumulative = 0
      this.#buckets.forEach((le, index) => {
        cumulative += series.counts[index] as number
        values.push({ metricName: `${this.name}_bucket`, labels: { le, ...labels }, value: cumulative })
      })
      values.push({ metricName: `${this.name}_bucket`, labels: { le: '+Inf', ...labels }, value: series.count })
      values.push({ metricName: `${this.name}_sum`, labels, value: series.sum })
      values.push({ metricName: `${this.name}_count`, labels, value: series.count })
    }
    return { name: this.name, help: this.help, type: 'histogram', aggregator: 'sum', values }
  }
}
