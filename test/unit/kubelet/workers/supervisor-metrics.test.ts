import {describe, expect, it} from 'vitest'

import type {Container, PodSandbox} from '../../../../src/generated/runtime/v1/api.js'
import {SupervisorMetrics} from '../../../../src/lib/kubelet/workers/supervisor-metrics.js'
import {renderRegistry} from '../../../../src/lib/metrics/exposition.js'

function sandbox(id: string, name: string, state: string): PodSandbox {
  return {id, state, metadata: {name, namespace: 'ci', uid: `uid-${name}`, attempt: 0}} as unknown as PodSandbox
}

function container(podSandboxId: string, name: string, attempt: number, state: string): Container {
  return {id: `${podSandboxId}-${name}-${attempt}`, podSandboxId, state, metadata: {name, attempt}} as unknown as Container
}

/** The rendered lines of the named family only (its HELP and TYPE lines left out). */
function series(metrics: SupervisorMetrics, name: string): string[] {
  return renderRegistry(metrics.registry)
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `) || line.startsWith(`${name}_`))
}

describe('SupervisorMetrics', () => {
  const web = [sandbox('s2', 'web', 'SANDBOX_READY'), sandbox('s1', 'web', 'SANDBOX_NOTREADY')]
  const job = [sandbox('s3', 'job', 'SANDBOX_NOTREADY')]
  const listed = [
    container('s2', 'app', 3, 'CONTAINER_RUNNING'),
    container('s2', 'app', 2, 'CONTAINER_EXITED'),
    container('s2', 'sidecar', 0, 'CONTAINER_CREATED'),
    container('s1', 'app', 1, 'CONTAINER_EXITED'),
    container('s3', 'run', 0, 'CONTAINER_EXITED'),
    // Another pod's container (not supervised): not counted.
    container('elsewhere', 'x', 9, 'CONTAINER_RUNNING'),
  ]

  it("counts the supervised pods' sandboxes and containers by state, under the kubelet's names, and restarts per container", () => {
    const metrics = new SupervisorMetrics()
    metrics.listed(
      [
        {fullName: 'web_ci', sandboxes: web},
        {fullName: 'job_ci', sandboxes: job},
      ],
      listed,
    )
    expect(series(metrics, 'kubelet_running_pods')).toEqual(['kubelet_running_pods 1'])
    expect(series(metrics, 'kubelet_running_containers')).toEqual([
      'kubelet_running_containers{container_state="created"} 1',
      'kubelet_running_containers{container_state="exited"} 3',
      'kubelet_running_containers{container_state="running"} 1',
      'kubelet_running_containers{container_state="unknown"} 0',
    ])
    expect(series(metrics, 'podctl_pod_sandboxes')).toEqual([
      'podctl_pod_sandboxes{sandbox_state="notready"} 2',
      'podctl_pod_sandboxes{sandbox_state="ready"} 1',
    ])
    expect(series(metrics, 'podctl_container_restarts_total')).toEqual([
      'podctl_container_restarts_total{namespace="ci",pod="job",container="run"} 0',
      'podctl_container_restarts_total{namespace="ci",pod="web",container="app"} 3',
      'podctl_container_restarts_total{namespace="ci",pod="web",container="sidecar"} 0',
    ])
  })

  it('replaces the counts at each listing: a pod that is gone drops out, back-off included', () => {
    const metrics = new SupervisorMetrics()
    metrics.listed([{fullName: 'job_ci', sandboxes: job}], listed)
    metrics.backOffWaiting({name: 'job', namespace: 'ci'}, 1)
    const waiting = 'podctl_containers_in_crash_backoff{namespace="ci",pod="job"} 1'
    expect(series(metrics, 'podctl_containers_in_crash_backoff')).toEqual([waiting])
    metrics.listed([{fullName: 'web_ci', sandboxes: web}], listed)
    expect(series(metrics, 'podctl_containers_in_crash_backoff')).toEqual([])
    expect(series(metrics, 'podctl_container_restarts_total')).toEqual([
      'podctl_container_restarts_total{namespace="ci",pod="web",container="app"} 3',
      'podctl_container_restarts_total{namespace="ci",pod="web",container="sidecar"} 0',
    ])
    expect(series(metrics, 'kubelet_running_pods')).toEqual(['kubelet_running_pods 1'])
  })

  it("counts every probe that ran as the kubelet's prober_probe_total: Liveness/Readiness/Startup, successful/failed/unknown", () => {
    const metrics = new SupervisorMetrics()
    const target = {pod: {name: 'web', namespace: 'ci', uid: 'u1'}, containerName: 'app'}
    metrics.probeRan(target, 'liveness', 'success')
    metrics.probeRan(target, 'liveness', 'warning')
    metrics.probeRan(target, 'readiness', 'failure')
    metrics.probeRan(target, 'startup', 'unknown')
    const labels = 'container="app",pod="web",namespace="ci",pod_uid="u1"'
    expect(series(metrics, 'prober_probe_total')).toEqual([
      `prober_probe_total{probe_type="Liveness",result="successful",${labels}} 2`,
      `prober_probe_total{probe_type="Readiness",result="failed",${labels}} 1`,
      `prober_probe_total{probe_type="Startup",result="unknown",${labels}} 1`,
    ])
  })

  it('keeps lag per loop as a histogram in seconds (early counts as on time)', () => {
    const metrics = new SupervisorMetrics()
    metrics.late('listing', 3)
    metrics.late('listing', -5)
    metrics.late('probe', 700)
    metrics.late('worker', 20)
    const lines = series(metrics, 'podctl_supervisor_lag_seconds')
    expect(lines).toContain('podctl_supervisor_lag_seconds_bucket{loop="listing",le="0.005"} 2')
    expect(lines).toContain('podctl_supervisor_lag_seconds_sum{loop="listing"} 0.003')
    expect(lines).toContain('podctl_supervisor_lag_seconds_count{loop="listing"} 2')
    expect(lines).toContain('podctl_supervisor_lag_seconds_bucket{loop="probe",le="0.5"} 0')
    expect(lines).toContain('podctl_supervisor_lag_seconds_bucket{loop="probe",le="1"} 1')
    expect(lines).toContain('podctl_supervisor_lag_seconds_bucket{loop="worker",le="0.05"} 1')
    expect(lines).toContain('podctl_supervisor_lag_seconds_sum{loop="worker"} 0.02')
  })
})
