import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {lab, labClient, labEnv, sandboxesIn, uniqueNamespace} from '../support/lab.js'
import {podctl} from '../support/podctl.js'
import {useLabNamespace} from '../support/lab-namespace.js'

/**
 * Two `podctl run` of the same pod at once used to both create it (check-then-create without a
 * lock). Now the second waits for the first's lock, then finds the pod and refuses it (exit 8), as
 * a run after it would. Whichever wins, exactly one pod (one sandbox) exists afterwards.
 */
const client = labClient()
const namespace = uniqueNamespace('concurrent-run')
const podDirRoot = mkdtempSync(join(tmpdir(), 'podctl-concurrent-'))
const env = labEnv({PODCTL_POD_LOGS_ROOT: lab().logRoot, PODCTL_POD_DIR_ROOT: podDirRoot})

useLabNamespace(client, namespace, podDirRoot)

describe('two concurrent runs of one pod', () => {
  it('make one pod: one run succeeds, the other refuses with AlreadyExists', async () => {
    const manifest = JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {name: 'twin', namespace},
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [{name: 'app', image: lab().busybox, command: ['sh', '-c', 'trap "exit 0" TERM; while true; do sleep 1; done']}],
      },
    })
    const results = await Promise.all([1, 2].map(() => podctl(['run', '-f', '-', '-q'], {env, input: manifest})))
    const codes = results.map((result) => result.code).sort()
    expect(codes, results.map((result) => result.stderr).join('\n')).toEqual([0, 8])
    const refused = results.find((result) => result.code === 8)!
    expect(refused.stderr).toContain('pod "twin" already exists')
    expect(await sandboxesIn(client, namespace)).toHaveLength(1)
  })
})
