import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {lab, labClient, labEnv, uniqueNamespace} from '../support/lab.js'
import {useLabNamespace} from '../support/lab-namespace.js'
import {podctl} from '../support/podctl.js'
import {until} from '../support/until.js'

/**
 * A pod being killed lists as Terminating, as kubectl shows it, for the whole grace period: its
 * sandbox is still ready, but podctl recorded the kill (terminating.json in its pod directory).
 */
const client = labClient()
const namespace = uniqueNamespace('pods-terminating')
const work = mkdtempSync(join(tmpdir(), 'podctl-pods-terminating-'))
const env = labEnv({PODCTL_POD_DIR_ROOT: join(work, 'pods'), PODCTL_POD_LOGS_ROOT: join(work, 'logs')})
useLabNamespace(client, namespace, work)

const columns = (line: string) => line.trim().split(/\s{3,}/)

describe('pods and status while a kill is under way', () => {
  it('show the pod Terminating during the grace period, then it is gone', async () => {
    const manifest = join(work, 'slow.yaml')
    // The container ignores SIGTERM: the kill waits out its grace period.
    writeFileSync(
      manifest,
      `apiVersion: v1
kind: Pod
metadata: {name: slow, namespace: ${namespace}}
spec:
  terminationGracePeriodSeconds: 30
  containers:
  - {name: c, image: ${lab().busybox}, command: [sh, -c, "trap '' TERM; while true; do sleep 1; done"]}
`,
    )
    const started = await podctl(['run', '-f', manifest, '-q', '--settle', '0'], {env})
    expect(started.code, started.stderr).toBe(0)
    const stateOf = async () => {
      const listed = await podctl(['pods', '-n', namespace], {env})
      expect(listed.code, listed.stderr).toBe(0)
      return listed.stdout.split('\n').slice(1).filter(Boolean).map(columns)[0]?.[3]
    }

    expect(await stateOf()).toBe('Ready')

    // A grace period long enough for a listing on a loaded machine to fall inside it.
    const kill = podctl(['kill', 'slow', '-n', namespace, '--grace-period', '15'], {env, timeoutMs: 60_000})
    const terminating = await until(
      'pods to show the pod Terminating',
      async () => ((await stateOf()) === 'Terminating' ? true : undefined),
      {
        timeoutMs: 15_000,
        pollMs: 200,
      },
    )
    expect(terminating).toBe(true)
    const status = await podctl(['status', 'slow', '-n', namespace], {env})
    expect(status.code, status.stderr).toBe(0)
    expect(status.stdout).toMatch(/^Phase: +Running( \(ready\))?, Terminating: podctl kill asked at \d{4}-\d\d-\d\dT\S+$/m)
    const killed = await kill
    expect(killed.code, killed.stderr).toBe(0)
    expect(await stateOf()).toBeUndefined()
  }, 90_000)
})
