import {describe, expect, it} from 'vitest'

import type {CriClient} from '../../../../src/lib/cri/client.js'
import {missingFeature} from '../../../../src/lib/cri/runtime-releases.js'
import {checkRuntimeSupport} from '../../../../src/lib/kubelet/lifecycle/runtime-support.js'
import {parseDocuments} from '../../../../src/lib/manifest/load.js'
import {parsePod} from '../../../../src/lib/manifest/pod.js'

const runtime = (runtimeName: string, runtimeVersion: string) => ({runtimeName, runtimeVersion})

async function pod(extra: string, mount = '[{name: tools, mountPath: /tools}]') {
  const text = `apiVersion: v1
kind: Pod
metadata: {name: web, namespace: shop}
spec:${extra}
  volumes: [{name: tools, image: {reference: "registry.example/tools:1", pullPolicy: IfNotPresent}}]
  containers: [{name: app, image: busybox:1.36, volumeMounts: ${mount}}]
`
  const [document] = await parseDocuments(text, 'pod.yaml')
  return parsePod(document, 'pod.yaml')
}

/** A client answering Version and Status; any other call fails the test. */
function client(version: {runtimeName: string; runtimeVersion: string}, userNamespaces = false): CriClient {
  return {
    runtimeEndpoint: 'unix:///run/x.sock',
    async runtime(method: string) {
      if (method === 'version') return version
      if (method === 'status') return {runtimeHandlers: [{name: '', features: {userNamespaces}}]}
      throw new Error(`unexpected ${method}`)
    },
  } as unknown as CriClient
}

describe('what a pod asks of the runtime, checked before anything is made', () => {
  it('image volumes: containerd 2.1+ and CRI-O 1.31+; a subPath of one: containerd 2.2+ and CRI-O 1.33+', () => {
    expect(missingFeature(runtime('containerd', '1.6.20~ds1'), 'imageVolumes')).toBe(
      'containerd 1.6.20~ds1 cannot mount image volumes (containerd 2.1+ or CRI-O 1.31+ can)',
    )
    expect(missingFeature(runtime('containerd', 'v2.1.4'), 'imageVolumes')).toBeUndefined()
    expect(missingFeature(runtime('containerd', 'v2.1.4'), 'imageVolumeSubPath')).toMatch(/^containerd 2\.1\.4 cannot mount a subPath/)
    expect(missingFeature(runtime('cri-o', '1.30.2'), 'imageVolumes')).toMatch(/^cri-o 1\.30\.2 cannot/)
    expect(missingFeature(runtime('cri-o', '1.34.0'), 'imageVolumeSubPath')).toBeUndefined()
    // Another runtime's own answer decides.
    expect(missingFeature(runtime('other', '0.1'), 'imageVolumes')).toBeUndefined()
  })

  it('refuses a pod with an image volume on containerd 1.6, naming the volume, the runtime and its version', async () => {
    await expect(checkRuntimeSupport(client(runtime('containerd', '1.6.20~ds1')), [await pod('')])).rejects.toThrow(
      'pod web_shop: volume tools: containerd 1.6.20~ds1 cannot mount image volumes (containerd 2.1+ or CRI-O 1.31+ can)',
    )
    await expect(checkRuntimeSupport(client(runtime('cri-o', '1.34.0')), [await pod('')])).resolves.toBeUndefined()
    const withSubPath = await pod('', '[{name: tools, mountPath: /bin2, subPath: bin}]')
    await expect(checkRuntimeSupport(client(runtime('containerd', 'v2.1.4')), [withSubPath])).rejects.toThrow(
      "pod web_shop: container app's mount of tools: containerd 2.1.4 cannot mount a subPath of an image volume",
    )
  })

  it('hostUsers: false names the handler, the runtime and why it cannot', async () => {
    await expect(checkRuntimeSupport(client(runtime('containerd', 'v2.4.2')), [await pod('\n  hostUsers: false')])).rejects.toThrow(
      'pod web_shop: spec.hostUsers is false, but RuntimeClass handler "" does not support user namespaces: ' +
        'containerd 2.4.2 reports none for it (it needs a runc that makes idmapped mounts, 1.2+, on a kernel that has them)',
    )
    await expect(
      checkRuntimeSupport(client(runtime('containerd', 'v2.4.2'), true), [await pod('\n  hostUsers: false')]),
    ).resolves.toBeUndefined()
  })
})
