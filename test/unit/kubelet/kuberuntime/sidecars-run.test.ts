import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'

import type {EnsureImageOptions, EnsureImageResult} from '../../../../src/lib/images/image-manager.js'
import {killPod} from '../../../../src/lib/kubelet/kuberuntime/kill.js'
import {type PodRunDeps, type PodRunSettings, runPod} from '../../../../src/lib/kubelet/run/run-pod.js'
import {parseDocuments} from '../../../../src/lib/manifest/load.js'
import {parsePod} from '../../../../src/lib/manifest/pod.js'
import {FakePodRuntime} from '../../../support/fake-pod-runtime.js'

const POD = `
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: shop}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 2
  initContainers:
  - {name: proxy, image: "busybox:1.36", restartPolicy: Always}
  - {name: setup, image: "busybox:1.36"}
  - {name: logger, image: "busybox:1.36", restartPolicy: Always}
  containers:
  - {name: app, image: "nginx:1.27"}
`

let fake: FakePodRuntime

beforeAll(async () => {
  fake = await new FakePodRuntime().start()
})

afterEach(() => fake.reset())

afterAll(async () => {
  await fake.close()
})

function settings(): PodRunSettings {
  const root = mkdtempSync(join(tmpdir(), 'podctl-sidecars-'))
  return {
    wait: 'running',
    replace: false,
    keepOnFailure: false,
    remove: false,
    logsRoot: join(root, 'logs'),
    podDirRoot: join(root, 'pods'),
    hostResolvConf: 'nameserver 10.0.0.2\n',
    nodeMemoryBytes: 1024 ** 3,
    pollMs: 20,
    settleMs: 0,
  }
}

function deps(): PodRunDeps {
  return {
    client: fake.client,
    images: {
      async ensureImage(options: EnsureImageOptions): Promise<EnsureImageResult> {
        return {image: options.image, imageRef: `sha256:${options.image}`, pulled: false, message: '', policy: 'IfNotPresent', attempts: 0}
      },
    },
    events() {},
    signal: new AbortController().signal,
  }
}

/** The container names of the calls of one method, in order (names as the runtime has them now, or as given). */
function named(method: string, names = new Map([...fake.containers.values()].map((container) => [container.id, container.metadata.name]))) {
  return fake.calls.filter((call) => call.method === method).map((call) => names.get(call.request.containerId) ?? '?')
}

/** Makes the app container exit 0 as soon as it runs (the fake keeps app containers running). */
function exitAppOnceRunning(): NodeJS.Timeout {
  const timer = setInterval(() => {
    const app = [...fake.containers.values()].find((container) => container.metadata.name === 'app')
    if (app?.state !== 'CONTAINER_RUNNING') return
    app.state = 'CONTAINER_EXITED'
    app.exitCode = 0
    app.finishedAt = String(BigInt(Date.now()) * 1_000_000n)
    clearInterval(timer)
  }, 1)
  return timer
}

describe('runPod with sidecars (the in-process fake runtime)', () => {
  it('starts init containers in order without waiting for a sidecar to complete, and keeps sidecars running', async () => {
    const [document] = await parseDocuments(POD, 'pod.yaml')
    const outcome = await runPod(parsePod(document, 'pod.yaml', {newUid: () => 'uid-1'}), [], settings(), deps())
    expect(outcome.failure).toBeUndefined()
    expect(named('startContainer')).toEqual(['proxy', 'setup', 'logger', 'app'])

    // Between a sidecar's StartContainer and the next CreateContainer: one ContainerStatus that finds it running, no wait for its exit.
    const methods = fake.methods()
    const proxyStart = methods.indexOf('startContainer')
    const setupCreate = methods.indexOf('createContainer', proxyStart)
    expect(methods.slice(proxyStart + 1, setupCreate).filter((method) => method === 'containerStatus')).toHaveLength(1)

    expect(outcome.result.containers.map(({name, type, state, exitCode}) => [name, type, state, exitCode])).toEqual([
      ['proxy', 'init', 'Running', null],
      ['setup', 'init', 'Exited', 0],
      ['logger', 'init', 'Running', null],
      ['app', 'app', 'Running', null],
    ])

    // kill: the app container first, then the sidecars in reverse declaration order.
    const names = new Map([...fake.containers.values()].map((container) => [container.id, container.metadata.name]))
    fake.calls.length = 0
    await killPod(fake.client, [...fake.sandboxes.values()] as never)
    expect(named('stopContainer', names)).toEqual(['app', 'logger', 'proxy'])
  })

  it('--wait completed: once the app container has exited, the sidecars are stopped in reverse order and the pod completes', async () => {
    const [document] = await parseDocuments(POD, 'pod.yaml')
    const run = runPod(parsePod(document, 'pod.yaml', {newUid: () => 'uid-3'}), [], {...settings(), wait: 'completed'}, deps())
    const exitApp = exitAppOnceRunning()
    const outcome = await run.finally(() => clearInterval(exitApp))
    expect(outcome.failure).toBeUndefined()
    expect(outcome.result.exitCode).toBe(0)
    expect(named('stopContainer')).toEqual(['logger', 'proxy'])
    expect(outcome.result.phase).toBe('Succeeded')
    expect(outcome.result.containers.map(({name, state}) => [name, state])).toEqual([
      ['proxy', 'Exited'],
      ['setup', 'Exited'],
      ['logger', 'Exited'],
      ['app', 'Exited'],
    ])
  })

  it('--wait completed with restartPolicy Always leaves the sidecars running (the kubelet would restart the app)', async () => {
    const [document] = await parseDocuments(POD.replace('restartPolicy: Never', 'restartPolicy: Always'), 'pod.yaml')
    const run = runPod(parsePod(document, 'pod.yaml', {newUid: () => 'uid-4'}), [], {...settings(), wait: 'completed'}, deps())
    const exitApp = exitAppOnceRunning()
    const outcome = await run.finally(() => clearInterval(exitApp))
    expect(outcome.failure).toBeUndefined()
    expect(named('stopContainer')).toEqual([])
  })

  it('a sidecar that exits while --wait running waits is restarted, whatever the pod restartPolicy', async () => {
    const [document] = await parseDocuments(
      POD.replace('  - {name: logger, image: "busybox:1.36", restartPolicy: Always}\n', ''),
      'pod.yaml',
    )
    const run = runPod(parsePod(document, 'pod.yaml', {newUid: () => 'uid-2'}), [], {...settings(), settleMs: 0}, deps())
    // Exit the sidecar as soon as it starts: the wait restarts it (attempt 1) and the run succeeds.
    const exitOnce = setInterval(() => {
      const proxy = [...fake.containers.values()].find((container) => container.metadata.name === 'proxy')
      if (proxy?.state === 'CONTAINER_RUNNING' && proxy.metadata.attempt === 0) {
        proxy.state = 'CONTAINER_EXITED'
        proxy.exitCode = 1
        proxy.finishedAt = String(BigInt(Date.now()) * 1_000_000n)
        clearInterval(exitOnce)
      }
    }, 1)
    const outcome = await run.finally(() => clearInterval(exitOnce))
    expect(outcome.failure).toBeUndefined()
    const proxies = [...fake.containers.values()].filter((container) => container.metadata.name === 'proxy')
    expect(proxies.map((container) => [container.metadata.attempt, container.state])).toContainEqual([1, 'CONTAINER_RUNNING'])
  })
})

describe('a sidecar with a startupProbe (the in-process fake runtime)', () => {
  it('the next init container is created only once the startup probe has succeeded', async () => {
    const manifest = POD.replace(
      '  - {name: proxy, image: "busybox:1.36", restartPolicy: Always}\n',
      '  - {name: proxy, image: "busybox:1.36", restartPolicy: Always, startupProbe: {exec: {command: [ls, /up]}, periodSeconds: 1}}\n',
    )
    let probes = 0
    fake.execSyncAnswer = () => {
      probes++
      return {stdout: Buffer.alloc(0), stderr: Buffer.alloc(0), exitCode: probes < 2 ? 1 : 0}
    }

    const [document] = await parseDocuments(manifest, 'pod.yaml')
    const outcome = await runPod(parsePod(document, 'pod.yaml', {newUid: () => 'uid-5'}), [], settings(), deps())
    expect(outcome.failure).toBeUndefined()
    const methods = fake.methods()
    const setupCreate = methods.indexOf('createContainer', methods.indexOf('startContainer'))
    expect(methods.slice(0, setupCreate).filter((method) => method === 'execSync')).toHaveLength(2)
    expect(named('startContainer')).toEqual(['proxy', 'setup', 'logger', 'app'])
  }, 15_000)
})
