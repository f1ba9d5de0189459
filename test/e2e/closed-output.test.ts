import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {PodLabel} from '../../src/lib/kube/labels.js'
import {lab, labClient, labEnv, sandboxesIn, uniqueNamespace} from '../support/lab.js'
import {podctl} from '../support/podctl.js'
import {useLabNamespace} from '../support/lab-namespace.js'

/**
 * A reader that closes podctl's output early (`podctl run -f app.yaml | head -1`) used to end a
 * command that changes the node at once, half-way: sandboxes with no containers, containers
 * created and never started. Such commands now finish their work, then end as a closed pipe ends
 * every command: exit 0, no message.
 */
const client = labClient()
const namespace = uniqueNamespace('closed-output')
const podDirRoot = mkdtempSync(join(tmpdir(), 'podctl-closed-output-'))
const env = labEnv({PODCTL_POD_LOGS_ROOT: lab().logRoot, PODCTL_POD_DIR_ROOT: podDirRoot})

useLabNamespace(client, namespace, podDirRoot)

const replicas = 3
const deployment = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: {name: 'cut', namespace},
  spec: {
    replicas,
    selector: {matchLabels: {app: 'cut'}},
    template: {
      metadata: {labels: {app: 'cut'}},
      spec: {terminationGracePeriodSeconds: 1, containers: [{name: 'app', image: lab().busybox, command: ['sleep', '3600']}]},
    },
  },
}

/** podctl with its stdout closed by the reader after the first chunk, as `| head -1` does. */
function closedAfterFirstChunk(args: string[], input?: string) {
  let closed = false
  const result = podctl(args, {
    env,
    input,
    onSpawn(child) {
      child.stdout!.once('data', () => {
        closed = true
        child.stdout!.destroy()
      })
    },
  })
  return result.then((outcome) => ({...outcome, closed}))
}

describe('a command that changes the node, its output closed by the reader', () => {
  it('run finishes every pod (each container running), then exits 0 quietly', async () => {
    const result = await closedAfterFirstChunk(['run', '-f', '-'], JSON.stringify(deployment))
    expect(result.closed).toBe(true)
    expect(result.code, result.stderr).toBe(0)
    expect(result.stderr).not.toMatch(/error/i)
    const {items} = await client.runtime('listPodSandbox', {filter: {labelSelector: {[PodLabel.namespace]: namespace}}})
    expect(items.map((pod) => pod.state)).toEqual(Array.from({length: replicas}, () => 'SANDBOX_READY'))
    const {containers} = await client.runtime('listContainers', {filter: {labelSelector: {[PodLabel.namespace]: namespace}}})
    expect(containers.map((container) => container.state)).toEqual(Array.from({length: replicas}, () => 'CONTAINER_RUNNING'))
  })

  it('kill removes every pod (one at a time, each reported as it goes), then exits 0 quietly', async () => {
    const result = await closedAfterFirstChunk(['kill', '-n', namespace, '--all', '--grace-period', '1', '--parallel', '1'])
    expect(result.closed).toBe(true)
    expect(result.code, result.stderr).toBe(0)
    expect(await sandboxesIn(client, namespace)).toEqual([])
  })
})
