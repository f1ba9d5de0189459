import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {lab, labClient, labEnv, sandboxesIn, uniqueNamespace} from '../support/lab.js'
import {podctl} from '../support/podctl.js'
import {useLabNamespace} from '../support/lab-namespace.js'

/**
 * Huge but valid durations against the lab: they used to reach setTimeout and grpc-js unclamped,
 * so `run` died with a stack trace after creating the pod and `kill --all` died half-way.
 */
const client = labClient()
const namespace = uniqueNamespace('durations')
const podDirRoot = mkdtempSync(join(tmpdir(), 'podctl-durations-'))
const env = labEnv({PODCTL_POD_LOGS_ROOT: lab().logRoot, PODCTL_POD_DIR_ROOT: podDirRoot})
const HUGE_GRACE = 999_999_999_999

function pod(name: string) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {name, namespace},
    spec: {
      terminationGracePeriodSeconds: HUGE_GRACE,
      containers: [
        {
          name: 'app',
          image: lab().busybox,
          command: ['sh', '-c', 'trap "exit 0" TERM; while true; do sleep 1; done'],
          lifecycle: {postStart: {exec: {command: ['true']}}, preStop: {exec: {command: ['true']}}},
        },
      ],
    },
  }
}

const noCrash = (stderr: string) => expect(stderr).not.toMatch(/TimeoutOverflowWarning|Deadline is too far|\n\s+at .+:\d+:\d+/)

useLabNamespace(client, namespace, podDirRoot)

describe('durations beyond what timers accept', () => {
  it('run --timeout 99999999999999s starts a pod with a postStart hook', async () => {
    for (const name of ['first', 'second']) {
      const result = await podctl(['run', '-f', '-', '--timeout', '99999999999999s', '-o', 'json'], {env, input: JSON.stringify(pod(name))})
      noCrash(result.stderr)
      expect(result.code, result.stderr).toBe(0)
      expect(JSON.parse(result.stdout).pods[0]).toMatchObject({pod: name, phase: 'Running'})
    }
  })

  it('kill --all kills every pod whose terminationGracePeriodSeconds is 999999999999, running its preStop hook', async () => {
    expect(await sandboxesIn(client, namespace)).toHaveLength(2)
    const result = await podctl(['kill', '--all', '-n', namespace, '-o', 'json'], {env})
    noCrash(result.stderr)
    expect(result.code, result.stderr).toBe(0)
    expect(JSON.parse(result.stdout).items.map((item: {removed: boolean}) => item.removed)).toEqual([true, true])
    expect(await sandboxesIn(client, namespace)).toEqual([])
  })
})
