/**
 * A small metrics registry for podctl's own /metrics (no client library: podctl adds no dependency).
 * Families are counters, gauges or histograms with fixed label names; each series is one set of label
 * values. The supervisor and the prober report into it and never see HTTP; exposition.ts renders it.
 */

export type MetricType = 'counter' | 'gauge' | 'histogram'
export type LabelValues = Readonly<Record<string, string>>

/** Prometheus' default buckets (seconds): from 5 ms to 10 s. */
export const DEFAULT_BUCKETS: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/

/** One series: its label values in the family's label order, and its value (a histogram's are in HistogramSeries). */
export interface Series {
  values: readonly string[]
  value: number
}

export interface HistogramSeries {
  values: readonly string[]
  /** Observations per bucket (not cumulative), one more than the buckets: the last is +Inf's. */
  counts: number[]
  sum: number
  count: number
}

abstract class Family<S extends {values: readonly string[]}> {
  protected readonly series = new Map<string, S>()

  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: MetricType,
    readonly labelNames: readonly string[],
  ) {
    if (!NAME.test(name)) throw new Error(`metric name ${name} is not a Prometheus name`)
    for (const label of labelNames) {
      const allowed = LABEL.test(label) && !label.startsWith('__') && label !== 'le'
      if (!allowed) throw new Error(`metric ${name}: label name ${label} is not allowed`)
    }
  }

  /** Every series, ordered by its label values (so the text is the same for the same state). */
  samples(): S[] {
    return [...this.series.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, series]) => series)
  }

  /** Forgets every series (a gauge recomputed from a listing drops what is gone). */
  clear(): void {
    this.series.clear()
  }

  protected valuesOf(labels: LabelValues): string[] {
    const extra = Object.keys(labels).find((key) => !this.labelNames.includes(key))
    if (extra !== undefined) throw new Error(`metric ${this.name} has no label ${extra}`)
    return this.labelNames.map((label) => labels[label] ?? '')
  }

  protected keyOf(values: readonly string[]): string {
    // \u0000 cannot occur in the text podctl puts in labels, so the key is unambiguous and sorts by the first label first.
    return values.join('\u0000')
  }
}

/** A single-valued family: counters and gauges. */
export class ValueFamily extends Family<Series> {
  /** Adds to the series (a counter only goes up). */
  inc(labels: LabelValues = {}, by = 1): void {
    if (this.type === 'counter' && by < 0) throw new Error(`counter ${this.name} cannot go down`)
    const values = this.valuesOf(labels)
    const key = this.keyOf(values)
    const series = this.series.get(key)
    if (series) series.value += by
    else this.series.set(key, {values, value: by})
  }

  set(labels: LabelValues, value: number): void {
    const values = this.valuesOf(labels)
    this.series.set(this.keyOf(values), {values, value})
  }

  value(labels: LabelValues): number | undefined {
    return this.series.get(this.keyOf(this.valuesOf(labels)))?.value
  }

  delete(labels: LabelValues): void {
    this.series.delete(this.keyOf(this.valuesOf(labels)))
  }
}

export class HistogramFamily extends Family<HistogramSeries> {
  constructor(
    name: string,
    help: string,
    labelNames: readonly string[],
    readonly buckets: readonly number[],
  ) {
    super(name, help, 'histogram', labelNames)
    const increasing = buckets.every((bound, index) => index === 0 || bound > buckets[index - 1])
    if (!increasing) throw new Error(`histogram ${name}: buckets must increase`)
  }

  observe(labels: LabelValues, value: number): void {
    const values = this.valuesOf(labels)
    const key = this.keyOf(values)
    let series = this.series.get(key)
    if (!series) {
      series = {values, counts: Array.from({length: this.buckets.length + 1}, () => 0), sum: 0, count: 0}
      this.series.set(key, series)
    }

    const bucket = this.buckets.findIndex((bound) => value <= bound)
    series.counts[bucket === -1 ? this.buckets.length : bucket]++
    series.sum += value
    series.count++
  }
}

export type AnyFamily = ValueFamily | HistogramFamily

export class MetricsRegistry {
  private readonly families = new Map<string, AnyFamily>()
  /** Run before every rendering: families derived from state (a listing) bring themselves up to date. */
  private readonly collectors: Array<() => void> = []

  counter(name: string, help: string, labelNames: readonly string[] = []): ValueFamily {
    return this.add(new ValueFamily(name, help, 'counter', labelNames))
  }

  gauge(name: string, help: string, labelNames: readonly string[] = []): ValueFamily {
    return this.add(new ValueFamily(name, help, 'gauge', labelNames))
  }

  histogram(name: string, help: string, labelNames: readonly string[] = [], buckets: readonly number[] = DEFAULT_BUCKETS): HistogramFamily {
    return this.add(new HistogramFamily(name, help, labelNames, buckets))
  }

  onCollect(collect: () => void): void {
    this.collectors.push(collect)
  }

  /** Every family, by name. */
  collect(): AnyFamily[] {
    for (const collect of this.collectors) collect()
    return [...this.families.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  }

  private add<F extends AnyFamily>(family: F): F {
    if (this.families.has(family.name)) throw new Error(`metric ${family.name} is registered twice`)
    this.families.set(family.name, family)
    return family
  }
}
