/**
 * podctl gc against real containerds. Containers on the shared lab, in a namespace of this file's
 * own (gc -n, images left alone): a crash-looping container's older exited instances go with their
 * log files, its newest stays with its log beside the running container; `kill` then leaves no pod
 * log directory. Images on a private containerd (fresh-runtime.ts), since image GC removes images:
 * past the high threshold an unused image podctl pulled goes; one a container uses, the runtime's
 * sandbox image and one crictl pulled stay. (gc-ownership.test.ts: what other tools leave on the lab.)
 */
import {existsSync, mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {CriClient} from '../../src/lib/cri/client.js'
import {ContainerAnnotation, ContainerLabel, PodctlAnnotation, PodLabel} from '../../src/lib/kube/labels.js'
import {type FreshRuntime, startFreshRuntime} from '../support/fresh-runtime.js'
import {lab, labClient, labEnv, makeContainerLogDir, runSandbox, sandboxConfig, uniqueNamespace} from '../support/lab.js'
import {useLabNamespace} from '../support/lab-namespace.js'
import {startAgent} from '../support/agent.js'
import {BIN, podctl} from '../support/podctl.js'
import {until} from '../support/until.js'
import {createTestPod, waitForExit} from '../support/pods.js'

const client = labClient()
const namespace = uniqueNamespace('gc')
const work = mkdtempSync(join(tmpdir(), 'podctl-gc-'))
const env = labEnv({
  PODCTL_POD_LOGS_ROOT: lab().logRoot,
  PODCTL_POD_DIR_ROOT: join(work, 'pods'),
  PODCTL_CONTAINER_LOGS_DIR: join(work, 'containers'),
})
/** The shared lab's images belong to every test: leave them alone. */
const NO_IMAGES = ['--image-gc-high-threshold', '100', '--image-gc-low-threshold', '99']
const UNUSED_IMAGE = `${lab().registry}/k8s-staging-cri-tools/test-image-1:latest`
const CRICTLS_IMAGE = `${lab().registry}/k8s-staging-cri-tools/test-image-digest:latest`

useLabNamespace(client, namespace, work)

/**
 * What a crash loop leaves: one more exited instance of `name`, attempt `attempt`, as podctl's restart
 * creates it (its io.podctl.containerType: garbage collection takes only podctl's containers).
 */
async function crashAgain(runtime: CriClient, pod: {sandboxId: string; uid: string; name: string}, name: string, attempt: number) {
  const config = sandboxConfig({name: pod.name, namespace, uid: pod.uid})
  makeContainerLogDir(config, name)
  const {containerId} = await runtime.runtime(
    'createContainer',
    {
      podSandboxId: pod.sandboxId,
      config: {
        metadata: {name, attempt},
        image: {image: lab().busybox},
        command: ['sh', '-c', `echo attempt ${attempt}; exit 1`],
        labels: {[PodLabel.name]: pod.name, [PodLabel.namespace]: namespace, [PodLabel.uid]: pod.uid, [ContainerLabel.name]: name},
        annotations: {[PodctlAnnotation.containerType]: 'app', [ContainerAnnotation.restartCount]: String(attempt)},
        logPath: `${name}/${attempt}.log`,
        linux: {},
      },
      sandboxConfig: config,
    },
    {timeoutMs: 120_000},
  )
  await runtime.runtime('startContainer', {containerId}, {timeoutMs: 120_000})
  await waitForExit(runtime, containerId)
  return containerId
}

async function instances(uid: string) {
  const {containers} = await client.runtime('listContainers', {filter: {labelSelector: {[PodLabel.uid]: uid}}})
  return containers
}

async function logPathOf(containerId: string): Promise<string> {
  const {status} = await client.runtime('containerStatus', {containerId})
  return status!.logPath
}

/** A pod whose `app` crashed `crashes` + 1 times (attempts 0…crashes, all exited) beside a running `web`, and the app instances' IDs. */
async function crashLoop(name: string, crashes: number) {
  const pod = await createTestPod(client, {
    name,
    namespace,
    restartPolicy: 'Always',
    containers: [
      {name: 'app', script: 'echo attempt 0; exit 1'},
      {name: 'web', script: 'trap "exit 0" TERM; while true; do sleep 1; done'},
    ],
  })
  await waitForExit(client, pod.containerIds.app)
  const ids = [pod.containerIds.app]
  const target = {sandboxId: pod.sandboxId, uid: pod.uid, name}
  for (let attempt = 1; attempt <= crashes; attempt++) ids.push(await crashAgain(client, target, 'app', attempt))
  return {pod, ids}
}

describe('podctl gc on the lab (containers, one namespace)', () => {
  it('keeps one exited instance per container name and its log beside the running one; kill then leaves no log directory', async () => {
    const {pod, ids} = await crashLoop('crash', 3)
    const logs = await Promise.all(ids.map((id) => logPathOf(id)))
    for (const log of logs) expect(existsSync(log)).toBe(true)

    const gc = await podctl(['gc', '-n', namespace, ...NO_IMAGES, '-o', 'json'], {env})
    expect(gc.stderr).toBe('')
    expect(gc.code).toBe(0)
    const result = JSON.parse(gc.stdout)
    expect(result.containers.map((container: {id: string; logPath: string}) => [container.id, container.logPath])).toEqual([
      [ids[2], logs[2]],
      [ids[1], logs[1]],
      [ids[0], logs[0]],
    ])
    expect(result.failures).toEqual([])

    const left = await instances(pod.uid)
    expect(left.map((container) => [container.metadata?.name, container.metadata?.attempt, container.state]).sort()).toEqual([
      ['app', 3, 'CONTAINER_EXITED'],
      ['web', 0, 'CONTAINER_RUNNING'],
    ])
    expect(logs.map((log) => existsSync(log))).toEqual([false, false, false, true])

    const again = await podctl(['gc', '-n', namespace, ...NO_IMAGES], {env})
    expect(again.stdout).toBe('nothing to collect\nimages: left alone (--image-gc-high-threshold 100)\n')

    const logDirectory = `${lab().logRoot}/${namespace}_crash_${pod.uid}`
    expect(existsSync(logDirectory)).toBe(true)
    const kill = await podctl(['kill', 'crash', '-n', namespace, '--force'], {env})
    expect(kill.code).toBe(0)
    expect(existsSync(logDirectory)).toBe(false)
  })
})

describe('the supervisor collects too (sync --watch --gc-period)', () => {
  it('removes a crash loop’s older exited instances and their logs within a round, the newest kept beside the running one', async () => {
    const {pod, ids} = await crashLoop('looped', 2)
    const logs = await Promise.all(ids.map((id) => logPathOf(id)))

    // Once a second here (the kubelet's minute is the default); -n keeps it to this file's namespace.
    const args = [BIN, 'sync', '--watch', '--all', '-n', namespace, '--gc-period', '1s', ...NO_IMAGES]
    const agent = startAgent([process.execPath, ...args], env)
    try {
      const left = await until(
        'the supervisor to collect the older instances',
        async () => {
          const now = await instances(pod.uid)
          return now.length === 2 ? now : undefined
        },
        {timeoutMs: 60_000, pollMs: 200},
      )
      expect(left.map((container) => [container.metadata?.name, container.metadata?.attempt, container.state]).sort()).toEqual([
        ['app', 2, 'CONTAINER_EXITED'],
        ['web', 0, 'CONTAINER_RUNNING'],
      ])
      expect(logs.map((log) => existsSync(log))).toEqual([false, false, true])
      await until('the GarbageCollected event', () => agent.output().includes('GarbageCollected'), {timeoutMs: 10_000})
    } finally {
      expect(await agent.stop(), agent.output()).toBe(0)
    }
  }, 120_000)
})

describe('podctl gc on a private containerd (images)', () => {
  it('past the high threshold removes an unused image podctl pulled; keeps one in use, the sandbox image and crictl’s', async () => {
    const runtime: FreshRuntime = await startFreshRuntime()
    const fresh = new CriClient({runtimeEndpoint: runtime.endpoint, callTimeoutMs: 120_000})
    const privateEnv = {
      ...env,
      CONTAINER_RUNTIME_ENDPOINT: runtime.endpoint,
      PODCTL_POD_LOGS_ROOT: join(runtime.dir, 'pod-logs'),
    }
    let logDirectory: string | undefined
    try {
      // busybox and another unused image pulled as crictl pulls them; the unused one podctl pulls, which records it.
      for (const image of [lab().busybox, CRICTLS_IMAGE]) await fresh.image('pullImage', {image: {image}})
      const pull = await podctl(['pull', UNUSED_IMAGE, '-q'], {env: privateEnv})
      expect(pull.code, pull.stderr).toBe(0)
      const {id: sandboxId, config} = await runSandbox(fresh, {name: 'user', namespace})
      logDirectory = config.logDirectory
      // Created, never started: a container in any state keeps its image.
      await fresh.runtime('createContainer', {
        podSandboxId: sandboxId,
        config: {metadata: {name: 'app', attempt: 0}, image: {image: lab().busybox}, command: ['true'], logPath: 'app/0.log', linux: {}},
        sandboxConfig: config,
      })
      const before = (await fresh.image('listImages', {})).images
      const byTag = (tag: string) => before.find((image) => image.repoTags.includes(tag))

      const args = ['gc', '--image-gc-high-threshold', '1', '--image-gc-low-threshold', '0']
      const young = await podctl([...args, '-o', 'json'], {env: privateEnv})
      expect(young.code).toBe(0)
      // First seen by podctl just now: younger than the default --minimum-image-ttl-duration of 2m.
      expect(JSON.parse(young.stdout).images.removed).toEqual([])

      const gc = await podctl([...args, '--minimum-image-ttl-duration', '0', '-o', 'json'], {env: privateEnv})
      expect(gc.code).toBe(0)
      const {images} = JSON.parse(gc.stdout)
      expect(images.removed).toEqual([{id: byTag(UNUSED_IMAGE)!.id, ref: UNUSED_IMAGE, sizeBytes: Number(byTag(UNUSED_IMAGE)!.size)}])
      expect(images.usageBefore.usagePercent).toBeGreaterThanOrEqual(1)
      // Low 0% cannot be reached by removing images: the kubelet's warning says what was eligible.
      expect(gc.stderr).toMatch(/^Warning: image filesystem \d+% used \(high threshold 1%\): needed to free \d+ bytes to reach 0%/)
      expect(JSON.parse(gc.stdout).leftAlone).toContainEqual({kind: 'image', why: 'not pulled by podctl on this runtime', count: 1})
      const after = (await fresh.image('listImages', {})).images.flatMap((image) => image.repoTags).sort()
      expect(after).toEqual([lab().busybox, CRICTLS_IMAGE, lab().pause].sort())
    } finally {
      fresh.close()
      await runtime.stop()
      if (logDirectory) rmSync(logDirectory, {recursive: true, force: true})
    }
  })
})
