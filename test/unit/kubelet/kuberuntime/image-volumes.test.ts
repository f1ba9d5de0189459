/**
 * Image volumes (volumes[].image) the kubelet's way, against the in-process fake runtime: the
 * volume's image is ensured with its own pull policy before the container that mounts it is created,
 * and the container gets a read-only CRI mount of that image (its subPath as image_sub_path); a
 * volume nobody mounts is not pulled, and a failed pull fails the container as an image pull does.
 */
import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'

import {ErrImagePullError} from '../../../../src/lib/images/errors.js'
import {BackOff} from '../../../../src/lib/kube/backoff.js'
import {createSandboxForPod} from '../../../../src/lib/kubelet/kuberuntime/create-sandbox.js'
import {syncPod} from '../../../../src/lib/kubelet/kuberuntime/sync-pod.js'
import {podSandboxes} from '../../../../src/lib/kubelet/kuberuntime/sandbox.js'
import {parseDocuments} from '../../../../src/lib/manifest/load.js'
import {parsePod} from '../../../../src/lib/manifest/pod.js'
import {FakePodRuntime} from '../../../support/fake-pod-runtime.js'
import {recordingImages} from '../../../support/present-images.js'

const POD = `
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: shop}
spec:
  volumes:
  - {name: tools, image: {reference: "registry.example/tools:1", pullPolicy: IfNotPresent}}
  - {name: unused, image: {reference: "registry.example/unused:1"}}
  containers:
  - name: app
    image: busybox:1.36
    volumeMounts:
    - {name: tools, mountPath: /tools}
    - {name: tools, mountPath: /bin2, subPath: bin}
`

let fake: FakePodRuntime
let images: ReturnType<typeof recordingImages>

beforeAll(async () => {
  fake = await new FakePodRuntime().start()
})

afterEach(() => fake.reset())

afterAll(async () => {
  await fake.close()
})

async function sync(failing?: string) {
  const root = mkdtempSync(join(tmpdir(), 'podctl-image-volumes-'))
  const settings = {logsRoot: join(root, 'logs'), podDirRoot: join(root, 'pods'), hostResolvConf: '', nodeMemoryBytes: 1024 ** 3}
  const [document] = await parseDocuments(POD, 'pod.yaml')
  const pod = parsePod(document, 'pod.yaml', {newUid: () => 'uid-iv'})
  await createSandboxForPod(fake.client, pod, 0, settings, {events() {}})
  images = recordingImages((options) =>
    options.image === failing ? new ErrImagePullError('rpc error: not found', options.image) : undefined,
  )
  const deps = {
    client: fake.client,
    images,
    events() {},
    signal: new AbortController().signal,
    backOff: new BackOff({initialMs: 1000, maxMs: 8000}),
  }
  return syncPod(pod, await podSandboxes(fake.client, pod), settings, deps)
}

describe('image volumes', () => {
  it("ensures the mounted volume's image with its pull policy, and mounts it read-only, a subPath as image_sub_path", async () => {
    const result = await sync()
    expect(result.failure).toBeUndefined()
    expect(images.requests.map((options) => [options.image, options.policy])).toEqual(
      expect.arrayContaining([
        ['busybox:1.36', undefined],
        ['registry.example/tools:1', 'IfNotPresent'],
      ]),
    )
    expect(images.requests.map((options) => options.image)).not.toContain('registry.example/unused:1')
    const create = fake.calls.find((call) => call.method === 'createContainer')!
    // The volume mounts come first; /etc/hosts after them.
    const mounts = create.request.config.mounts.slice(0, 2)
    expect(mounts).toEqual([
      expect.objectContaining({
        containerPath: '/tools',
        hostPath: '',
        readonly: true,
        image: expect.objectContaining({image: 'sha256:registry.example/tools:1', userSpecifiedImage: 'registry.example/tools:1'}),
        imageSubPath: '',
      }),
      expect.objectContaining({containerPath: '/bin2', readonly: true, imageSubPath: 'bin'}),
    ])
  })

  it("fails the container as an image pull does when the volume's image cannot be pulled, creating nothing", async () => {
    const result = await sync('registry.example/tools:1')
    expect(result.failure?.code).toBe('ErrImagePull')
    expect(fake.methods()).not.toContain('createContainer')
  })
})
