/**
 * The Prometheus text exposition format, version 0.0.4: per family a HELP and a TYPE line, then its
 * series; histograms as _bucket (cumulative, le last, +Inf included), _sum and _count. Label values
 * escape backslash, double quote and newline; HELP text escapes backslash and newline.
 */
import type {AnyFamily, MetricsRegistry} from './registry.js'

export const EXPOSITION_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8'

export function renderRegistry(registry: MetricsRegistry): string {
  return registry.collect().map(renderFamily).join('')
}

export function renderFamily(family: AnyFamily): string {
  const lines = [`# HELP ${family.name} ${escapeHelp(family.help)}`, `# TYPE ${family.name} ${family.type}`]
  if (family.type === 'histogram' && 'buckets' in family) {
    for (const series of family.samples()) {
      let cumulative = 0
      const bounds = [...family.buckets, Number.POSITIVE_INFINITY]
      for (const [index, bound] of bounds.entries()) {
        cumulative += series.counts[index]
        lines.push(sample(`${family.name}_bucket`, [...family.labelNames, 'le'], [...series.values, formatNumber(bound)], cumulative))
      }

      lines.push(
        sample(`${family.name}_sum`, family.labelNames, series.values, series.sum),
        sample(`${family.name}_count`, family.labelNames, series.values, series.count),
      )
    }
  } else if (!('buckets' in family)) {
    for (const series of family.samples()) lines.push(sample(family.name, family.labelNames, series.values, series.value))
  }

  return lines.map((line) => `${line}\n`).join('')
}

function sample(name: string, labelNames: readonly string[], values: readonly string[], value: number): string {
  const labels = labelNames.map((label, index) => `${label}="${escapeLabelValue(values[index])}"`)
  return `${name}${labels.length > 0 ? `{${labels.join(',')}}` : ''} ${formatNumber(value)}`
}

export function escapeLabelValue(value: string): string {
  return value
    .replaceAll('\\', String.raw`\\`)
    .replaceAll('"', String.raw`\"`)
    .replaceAll('\n', String.raw`\n`)
}

function escapeHelp(text: string): string {
  return text.replaceAll('\\', String.raw`\\`).replaceAll('\n', String.raw`\n`)
}

/** Go's float text as Prometheus parses it: +Inf, -Inf, NaN, else the shortest decimal. */
export function formatNumber(value: number): string {
  if (Number.isNaN(value)) return 'NaN'
  if (value === Number.POSITIVE_INFINITY) return '+Inf'
  if (value === Number.NEGATIVE_INFINITY) return '-Inf'
  return String(value)
}
