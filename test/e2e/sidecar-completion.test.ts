import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {lab, labClient, labEnv, uniqueNamespace} from '../support/lab.js'
import {podctl} from '../support/podctl.js'
import {useLabNamespace} from '../support/lab-namespace.js'

/**
 * Sidecars do not keep a finished pod alive (the kubelet's computePodActions kills the pod once its
 * app containers have terminated for good): `run --wait completed` stops them, the last declared
 * first, and the pod is Succeeded.
 */
const client = labClient()
const namespace = uniqueNamespace('sidecar-done')
const work = mkdtempSync(join(tmpdir(), 'podctl-sidecar-done-'))
const env = labEnv({PODCTL_POD_LOGS_ROOT: join(work, 'logs'), PODCTL_POD_DIR_ROOT: join(work, 'pods')})

interface Listed {
  metadata: {name: string}
  state: string
}

useLabNamespace(client, namespace, work)

describe('sidecars stop when the app containers are done', () => {
  it('run --wait completed returns 0, both sidecars are stopped (reverse order), status shows Succeeded', async () => {
    const busybox = lab().busybox
    const path = join(work, 'pod.yaml')
    // `sleep` as PID 1 ignores SIGTERM: each sidecar takes its whole 2 s grace period, so the order shows in finishedAt.
    writeFileSync(
      path,
      `apiVersion: v1
kind: Pod
metadata: {name: job, namespace: ${namespace}}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 2
  initContainers:
  - {name: first, image: ${busybox}, command: [sleep, '3600'], restartPolicy: Always}
  - {name: second, image: ${busybox}, command: [sleep, '3600'], restartPolicy: Always}
  containers:
  - {name: app, image: ${busybox}, command: [sh, -c, 'echo done']}
`,
    )
    const run = await podctl(['run', '-f', path, '--wait', 'completed', '-q', '-o', 'json'], {env})
    expect(run.code, run.stderr).toBe(0)
    const [pod] = JSON.parse(run.stdout).pods
    expect(pod.phase).toBe('Succeeded')
    expect(pod.exitCode).toBe(0)

    const ps = await podctl(['ps', '-a', '-n', namespace, '--pod', 'job', '-o', 'json'], {env})
    expect(ps.code, ps.stderr).toBe(0)
    const states = (JSON.parse(ps.stdout).containers as Listed[]).map((container) => [container.metadata.name, container.state])
    expect(states.sort()).toEqual([
      ['app', 'CONTAINER_EXITED'],
      ['first', 'CONTAINER_EXITED'],
      ['second', 'CONTAINER_EXITED'],
    ])

    const finished = async (name: string) => {
      const inspect = await podctl(['inspect', '-n', namespace, `job/${name}`], {env})
      expect(inspect.code, inspect.stderr).toBe(0)
      return Date.parse(JSON.parse(inspect.stdout).status.finishedAt)
    }

    // The last declared sidecar is stopped first; the first one only after it is gone.
    expect(await finished('first')).toBeGreaterThan(await finished('second'))

    const status = await podctl(['status', 'job', '-n', namespace, '-o', 'json'], {env})
    expect(status.code, status.stderr).toBe(0)
    expect(JSON.parse(status.stdout).phase).toBe('Succeeded')

    const kill = await podctl(['kill', 'job', '-n', namespace, '--grace-period', '0'], {env})
    expect(kill.code, kill.stderr).toBe(0)
  })
})
