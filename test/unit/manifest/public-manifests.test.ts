/**
 * Pod manifests from public projects (test/fixtures/public, unchanged): the reader takes what
 * Kubernetes 1.36 takes, drops what a 1.36 API server drops, and refuses, by path, a field no
 * release up to 1.36 has, as `kubectl apply` does with its default strict field validation.
 */
import {readFileSync} from 'node:fs'

import {describe, expect, it} from 'vitest'

import {parseDocuments} from '../../../src/lib/manifest/load.js'
import {parsePod} from '../../../src/lib/manifest/pod.js'

const fixture = (name: string) => readFileSync(new URL(`../../fixtures/public/${name}`, import.meta.url), 'utf8')

async function read(name: string) {
  const [document] = await parseDocuments(fixture(name), name)
  return parsePod(document, name)
}

describe('public Pod manifests', () => {
  it("reads kubernetes/examples' pods whole: nothing dropped", async () => {
    for (const name of ['javaweb.yaml', 'exclusive-1.yaml', 'pod_priv.yaml', 'explorer-pod.yaml']) {
      const pod = await read(name)
      expect(pod.droppedFields, name).toBeUndefined()
    }

    const javaweb = await read('javaweb.yaml')
    expect(javaweb.initContainers.map((c) => c.name)).toEqual(['war'])
    expect(javaweb.containers[0].ports[0]).toMatchObject({containerPort: 8080, hostPort: 8001})
  })

  it('drops a resource podctl does not set (pod-level pids), with the warning', async () => {
    expect((await read('pod-level-pid-limit.yaml')).droppedFields).toEqual(['spec.resources.limits.pids'])
  })

  it('refuses a field newer than Kubernetes 1.36 (emptyDir.mode) by its path, as kubectl apply against 1.36 does', async () => {
    await expect(read('emptydir-volume-mode.yaml')).rejects.toThrow(
      'emptydir-volume-mode.yaml: spec.volumes[0].emptyDir.mode is not a field of EmptyDirVolumeSource in Kubernetes 1.17–1.36',
    )
  })
})
