import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {lab, labClient, labEnv, sandboxesIn, uniqueNamespace} from '../support/lab.js'
import {podctl} from '../support/podctl.js'
import {useLabNamespace} from '../support/lab-namespace.js'

/**
 * A Ctrl-C that lands after `run` has its result (here: as soon as the JSON result reaches stdout)
 * changes nothing: the pod stays, the exit code is the result's. It used to exit 130 (killed by
 * SIGINT) because the handlers were gone by then. When the signal comes too late to find the
 * process at all the test passes trivially; it can never fail on a correct podctl.
 */
const client = labClient()
const namespace = uniqueNamespace('late-sigint')
const podDirRoot = mkdtempSync(join(tmpdir(), 'podctl-late-'))
const env = labEnv({PODCTL_POD_LOGS_ROOT: lab().logRoot, PODCTL_POD_DIR_ROOT: podDirRoot})

useLabNamespace(client, namespace, podDirRoot)

describe('run and a Ctrl-C after its result', () => {
  it('exits with the result code, not 130, and leaves the pod running', async () => {
    const manifest = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {name: 'late', namespace},
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [{name: 'app', image: lab().busybox, command: ['sh', '-c', 'trap "exit 0" TERM; while true; do sleep 1; done']}],
      },
    }
    let signalled = false
    const result = await podctl(['run', '-f', '-', '-o', 'json'], {
      env,
      input: JSON.stringify(manifest),
      onSpawn(child) {
        child.stdout?.on('data', () => {
          if (signalled) return
          signalled = true
          child.kill('SIGINT')
          child.kill('SIGINT')
        })
      },
    })
    expect(signalled).toBe(true)
    expect(result.code, result.stderr).toBe(0)
    expect(JSON.parse(result.stdout).pods[0]).toMatchObject({pod: 'late', phase: 'Running', rolledBack: false})
    expect(result.stderr).not.toContain('Interrupted')
    expect(await sandboxesIn(client, namespace)).toHaveLength(1)
  })
})
