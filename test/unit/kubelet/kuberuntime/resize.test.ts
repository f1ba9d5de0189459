/**
 * In-place resize (resize.ts) against the in-process fake runtime, on a pod run the way `podctl run`
 * runs it (recorded): UpdateContainerResources with the kubelet's cgroup numbers, the refusals of the
 * API server (QoS class, init containers), RestartContainer, and the next start using the new resources.
 */
import {mkdtempSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'

import {recordDesiredPod} from '../../../../src/lib/kubelet/config/desired-state.js'
import {resizePod} from '../../../../src/lib/kubelet/kuberuntime/resize.js'
import {runPod} from '../../../../src/lib/kubelet/run/run-pod.js'
import {parseDocuments} from '../../../../src/lib/manifest/load.js'
import {parsePod} from '../../../../src/lib/manifest/pod.js'
import {FakePodRuntime} from '../../../support/fake-pod-runtime.js'
import {presentImages} from '../../../support/present-images.js'

const POD = `
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: shop}
spec:
  initContainers:
  - name: setup
    image: "busybox:1.36"
    resources: {requests: {cpu: 200m, memory: 64Mi}, limits: {cpu: 200m, memory: 64Mi}}
  containers:
  - name: app
    image: "busybox:1.36"
    resources: {requests: {cpu: 100m, memory: 32Mi}, limits: {cpu: 200m, memory: 64Mi}}
  - name: side
    image: "busybox:1.36"
    resources: {requests: {cpu: 100m, memory: 32Mi}, limits: {cpu: 200m, memory: 64Mi}}
    resizePolicy: [{resourceName: memory, restartPolicy: RestartContainer}]
`

let fake: FakePodRuntime
let root: string

beforeAll(async () => {
  fake = await new FakePodRuntime().start()
})

afterEach(() => fake.reset())

afterAll(async () => {
  await fake.close()
})

async function runWeb(): Promise<void> {
  root = mkdtempSync(join(tmpdir(), 'podctl-resize-'))
  const settings = {logsRoot: join(root, 'logs'), podDirRoot: join(root, 'pods'), hostResolvConf: '', nodeMemoryBytes: 1024 ** 3}
  const [document] = await parseDocuments(POD, 'pod.yaml')
  const pod = parsePod(document, 'pod.yaml', {newUid: () => 'uid-web'})
  const outcome = await runPod(
    pod,
    [],
    {...settings, wait: 'running', replace: false, keepOnFailure: false, remove: false, pollMs: 20},
    {client: fake.client, images: presentImages, events() {}, signal: new AbortController().signal},
  )
  expect(outcome.failure).toBeUndefined()
  await recordDesiredPod(settings.podDirRoot, pod, fake.client.runtimeEndpoint)
  fake.calls.length = 0
}

const request = (extra: object) => ({name: 'web', namespace: 'shop', requests: {}, limits: {}, ...extra})

describe('resize', () => {
  it("changes a running container's cgroup in place (the kubelet's numbers) and records the new resources", async () => {
    await runWeb()
    const outcome = await resizePod(fake.client, request({container: 'app', limits: {cpu: '500m', memory: '128Mi'}}))
    expect(outcome).toMatchObject({pod: 'web_shop', container: 'app', action: 'updated', after: {limits: {cpu: '500m', memory: '128Mi'}}})
    const update = fake.calls.find((call) => call.method === 'updateContainerResources')!
    expect(update.request.linux).toMatchObject({
      cpuPeriod: '100000',
      cpuQuota: '50000',
      cpuShares: '102',
      memoryLimitInBytes: String(128 * 1024 ** 2),
    })
    expect(fake.methods()).not.toContain('stopContainer')
    const recorded = JSON.parse(readFileSync(join(root, 'pods', 'uid-web', 'resized.json'), 'utf8'))
    expect(recorded.app).toEqual({limits: {cpu: '500m', memory: '128Mi'}, requests: {cpu: '100m', memory: '32Mi'}})
  })

  it('refuses what the API server refuses: a QoS change, an init container, no change; and a pod podctl does not record', async () => {
    await runWeb()
    // Both containers with requests equal to limits would make the pod Guaranteed.
    await resizePod(fake.client, request({container: 'side', requests: {cpu: '200m', memory: '64Mi'}}))
    await expect(resizePod(fake.client, request({container: 'app', requests: {cpu: '200m', memory: '64Mi'}}))).rejects.toMatchObject({
      exitCode: 2,
      message: "resizing app would change pod web_shop's QoS class from Burstable to Guaranteed, which Kubernetes does not allow",
    })
    await expect(resizePod(fake.client, request({container: 'setup', limits: {cpu: '1'}}))).rejects.toThrow(
      'container setup of pod web_shop is an init container: only app containers and sidecars can be resized',
    )
    await expect(resizePod(fake.client, request({container: 'app', limits: {cpu: '200m'}}))).rejects.toThrow(/nothing to resize$/)
    await expect(resizePod(fake.client, request({limits: {cpu: '1'}}))).rejects.toThrow(/has 2 containers \(app, side\); pick one/)
    await expect(resizePod(fake.client, request({name: 'nope', limits: {cpu: '1'}}))).rejects.toMatchObject({exitCode: 5})
    await expect(resizePod(fake.client, request({container: 'app', requests: {cpu: '1'}}))).rejects.toThrow(
      'resize: resources.requests.cpu must be less than or equal to the cpu limit (200m)',
    )
  })

  it('RestartContainer: stops the container, whose next start gets the new resources while its hash stays', async () => {
    await runWeb()
    const side = [...fake.containers.values()].find((container) => container.metadata.name === 'side')!
    const hash = side.annotations['io.kubernetes.container.hash']
    const outcome = await resizePod(fake.client, request({container: 'side', limits: {memory: '96Mi'}}))
    expect(outcome.action).toBe('restarting')
    expect(fake.methods()).toEqual(expect.arrayContaining(['stopContainer']))
    expect(fake.methods()).not.toContain('updateContainerResources')
    expect(side.state).toBe('CONTAINER_EXITED')
    expect(hash).toBeDefined()
  })
})
