import {describe, expect, it} from 'vitest'

import {escapeLabelValue, formatNumber, renderRegistry} from '../../../src/lib/metrics/exposition.js'
import {MetricsRegistry} from '../../../src/lib/metrics/registry.js'

describe('the text exposition format (0.0.4)', () => {
  it('writes HELP and TYPE per family, families by name and series by label values, whatever the order of reports', () => {
    const registry = new MetricsRegistry()
    const probes = registry.counter('prober_probe_total', 'Probes by result.', ['probe_type', 'result'])
    const running = registry.gauge('kubelet_running_pods', 'Pods with a running sandbox.')
    probes.inc({probe_type: 'Readiness', result: 'successful'})
    probes.inc({probe_type: 'Liveness', result: 'failed'})
    probes.inc({probe_type: 'Liveness', result: 'successful'}, 2)
    probes.inc({probe_type: 'Liveness', result: 'failed'})
    running.set({}, 3)
    expect(renderRegistry(registry)).toBe(
      [
        '# HELP kubelet_running_pods Pods with a running sandbox.',
        '# TYPE kubelet_running_pods gauge',
        'kubelet_running_pods 3',
        '# HELP prober_probe_total Probes by result.',
        '# TYPE prober_probe_total counter',
        'prober_probe_total{probe_type="Liveness",result="failed"} 2',
        'prober_probe_total{probe_type="Liveness",result="successful"} 2',
        'prober_probe_total{probe_type="Readiness",result="successful"} 1',
        '',
      ].join('\n'),
    )
  })

  it('escapes backslash, double quote and newline in label values, and backslash and newline in HELP', () => {
    const registry = new MetricsRegistry()
    registry.gauge('odd', 'Help with \\ and\na newline "quoted".', ['name']).set({name: 'a\\b "c"\nd'}, 1)
    expect(renderRegistry(registry)).toBe(
      [String.raw`# HELP odd Help with \\ and\na newline "quoted".`, '# TYPE odd gauge', String.raw`odd{name="a\\b \"c\"\nd"} 1`, ''].join(
        '\n',
      ),
    )
    expect(escapeLabelValue('plain')).toBe('plain')
  })

  it('writes histograms as cumulative _bucket series with le last and +Inf, then _sum and _count', () => {
    const registry = new MetricsRegistry()
    const lag = registry.histogram('lag_seconds', 'Lag.', ['loop'], [0.1, 1])
    lag.observe({loop: 'probe'}, 0.05)
    lag.observe({loop: 'probe'}, 0.5)
    lag.observe({loop: 'probe'}, 3)
    lag.observe({loop: 'listing'}, 0.1)
    expect(renderRegistry(registry)).toBe(
      [
        '# HELP lag_seconds Lag.',
        '# TYPE lag_seconds histogram',
        'lag_seconds_bucket{loop="listing",le="0.1"} 1',
        'lag_seconds_bucket{loop="listing",le="1"} 1',
        'lag_seconds_bucket{loop="listing",le="+Inf"} 1',
        'lag_seconds_sum{loop="listing"} 0.1',
        'lag_seconds_count{loop="listing"} 1',
        'lag_seconds_bucket{loop="probe",le="0.1"} 1',
        'lag_seconds_bucket{loop="probe",le="1"} 2',
        'lag_seconds_bucket{loop="probe",le="+Inf"} 3',
        'lag_seconds_sum{loop="probe"} 3.55',
        'lag_seconds_count{loop="probe"} 3',
        '',
      ].join('\n'),
    )
  })

  it('writes a family with no series as its HELP and TYPE only', () => {
    const registry = new MetricsRegistry()
    registry.counter('none_total', 'Nothing yet.', ['a'])
    expect(renderRegistry(registry)).toBe('# HELP none_total Nothing yet.\n# TYPE none_total counter\n')
  })

  it('writes numbers as Prometheus parses them', () => {
    const numbers = [Infinity, -Infinity, Number.NaN, 0, 1.5, 42]
    expect(numbers.map((value) => formatNumber(value))).toEqual(['+Inf', '-Inf', 'NaN', '0', '1.5', '42'])
  })
})

describe('MetricsRegistry', () => {
  it('refuses what Prometheus would not read: bad names, reserved labels, unknown labels, a counter going down, a name twice', () => {
    const registry = new MetricsRegistry()
    expect(() => registry.gauge('bad-name', 'x')).toThrow('metric name bad-name is not a Prometheus name')
    expect(() => registry.gauge('g', 'x', ['le'])).toThrow('metric g: label name le is not allowed')
    const counter = registry.counter('c_total', 'x', ['a'])
    expect(() => counter.inc({b: '1'})).toThrow('metric c_total has no label b')
    expect(() => counter.inc({a: '1'}, -1)).toThrow('counter c_total cannot go down')
    expect(() => registry.counter('c_total', 'x')).toThrow('metric c_total is registered twice')
    expect(() => registry.histogram('h', 'x', [], [1, 1])).toThrow('histogram h: buckets must increase')
  })

  it('runs its collectors before every rendering', () => {
    const registry = new MetricsRegistry()
    const gauge = registry.gauge('seen', 'x')
    let renderings = 0
    registry.onCollect(() => gauge.set({}, ++renderings))
    renderRegistry(registry)
    expect(renderRegistry(registry)).toContain('\nseen 2\n')
  })
})
