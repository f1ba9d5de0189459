/**
 * podctl gc and a supervisor's collection on the shared lab, beside what other tools leave there:
 * crictl's pods (made straight through the CRI, as `crictl runp` / `crictl create` make them: no
 * podctl annotations), a log directory under the pod log root that no podctl made, and a user's
 * dead link in the links directory. The kubelet's rules alone would take crictl's two exited `app`
 * containers grouped by name across two pods (one of them that pod's only container), the older
 * of another pod's two attempts, its older stopped sandbox, the foreign directory and the links;
 * podctl leaves every one of them alone and collects only its own pod's older dead instance.
 *
 * Safe beside other tests: every collection here is `-n` this file's namespace (containers,
 * sandboxes and log directories of other namespaces are out of scope), images are left alone
 * (--image-gc-high-threshold 100), the links directory is this file's own, and the exact counts of
 * what was left alone show nothing outside the namespace was even considered.
 */
import {randomBytes} from 'node:crypto'
import {existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, utimesSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {setTimeout as sleep} from 'node:timers/promises'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {ContainerLabel, PodLabel} from '../../src/lib/kube/labels.js'
import {startAgent} from '../support/agent.js'
import {waitForExit} from '../support/containers.js'
import {
  lab,
  labClient,
  labEnv,
  makeContainerLogDir,
  runSandbox,
  sandboxConfig,
  type SandboxConfigSpec,
  uniqueNamespace,
} from '../support/lab.js'
import {useLabNamespace} from '../support/lab-namespace.js'
import {BIN, podctl} from '../support/podctl.js'
import {until} from '../support/until.js'

const client = labClient()
const namespace = uniqueNamespace('gc-own')
const work = mkdtempSync(join(tmpdir(), 'podctl-gc-ownership-'))
const linksDir = join(work, 'containers')
const {logRoot} = lab()
const env = labEnv({
  PODCTL_POD_LOGS_ROOT: logRoot,
  PODCTL_POD_DIR_ROOT: join(work, 'pods'),
  PODCTL_CONTAINER_LOGS_DIR: linksDir,
  PODCTL_BACKOFF_BASE_MS: '300',
})
/** The shared lab's images belong to every test: leave them alone. */
const SCOPE = ['-n', namespace, '--image-gc-high-threshold', '100', '--image-gc-low-threshold', '99']
const NOT_PODCTL = 'not made by podctl (no io.podctl annotations, no podctl record)'

useLabNamespace(client, namespace, work)
afterAll(() => {
  // Log directories of this namespace's pods (crictl's, and the foreign one) under the shared log root.
  for (const name of readdirSync(logRoot)) if (name.startsWith(`${namespace}_`)) rmSync(join(logRoot, name), {recursive: true, force: true})
})

/** A crictl-made sandbox: the kubelet's labels, as crictl's pod configs give them, no podctl annotations. */
async function crictlSandbox(spec: Omit<SandboxConfigSpec, 'namespace'>): Promise<{id: string; uid: string}> {
  const {id, config} = await runSandbox(client, {...spec, namespace})
  return {id, uid: config.metadata.uid}
}

/** `crictl create` + `crictl start` of an `app` container that exits at once, with the labels its config gives. */
async function crictlContainer(sandbox: {id: string; uid: string}, pod: string, attempt: number, labels: Record<string, string>) {
  const config = sandboxConfig({name: pod, namespace, uid: sandbox.uid})
  // As the kubelet (and a crictl user's config) leaves it: CRI-O does not make the container's log directory itself.
  makeContainerLogDir(config, 'app')
  const {containerId} = await client.runtime(
    'createContainer',
    {
      podSandboxId: sandbox.id,
      config: {
        metadata: {name: 'app', attempt},
        image: {image: lab().busybox},
        command: ['sh', '-c', `echo crictl ${pod} ${attempt}`],
        labels,
        logPath: `app/${attempt}.log`,
        linux: {},
      },
      sandboxConfig: config,
    },
    {timeoutMs: 120_000},
  )
  await client.runtime('startContainer', {containerId}, {timeoutMs: 120_000})
  await waitForExit(client, containerId)
  return containerId
}

interface Foreign {
  containers: string[]
  sandboxes: string[]
  directory: string
  links: string[]
}

/** What other tools leave in this namespace: crictl's pods, a foreign log directory, a user's dead link. */
async function foreignObjects(): Promise<Foreign> {
  // Labelled with the namespace alone (so -n keeps this file to its own), no pod uid: the kubelet's rule groups them by name across pods.
  const byNamespace = {[PodLabel.namespace]: namespace}
  const a = await crictlSandbox({name: 'tool-a'})
  const b = await crictlSandbox({name: 'tool-b'})
  const containers = [
    await crictlContainer(a, 'tool-a', 0, byNamespace),
    await crictlContainer(a, 'tool-a', 1, byNamespace),
    await crictlContainer(b, 'tool-b', 0, byNamespace),
  ]
  // A pod crictl recreated: its older sandbox stopped and empty, the newer one holding two attempts of `app`,
  // labelled as the kubelet labels.
  const uid = randomBytes(8).toString('hex')
  const older = await crictlSandbox({name: 'tool-c', uid, attempt: 0})
  await client.runtime('stopPodSandbox', {podSandboxId: older.id})
  const newer = await crictlSandbox({name: 'tool-c', uid, attempt: 1})
  const kubeletLabels = {[PodLabel.name]: 'tool-c', [PodLabel.namespace]: namespace, [PodLabel.uid]: uid, [ContainerLabel.name]: 'app'}
  containers.push(await crictlContainer(newer, 'tool-c', 0, kubeletLabels), await crictlContainer(newer, 'tool-c', 1, kubeletLabels))

  // A pod log directory of a pod no runtime here has any more (another runtime's, or a kubelet's deleted pod), unchanged for minutes.
  const directory = join(logRoot, `${namespace}_gone_${randomBytes(8).toString('hex')}`)
  mkdirSync(join(directory, 'app'), {recursive: true})
  writeFileSync(join(directory, 'app', '0.log'), '2026-01-01T00:00:00.000000000Z stdout F not podctl\n')
  const minutesAgo = Date.now() / 1000 - 300
  utimesSync(directory, minutesAgo, minutesAgo)
  // Dead links named like the kubelet's: one into that directory, and a user's own pointing anywhere.
  mkdirSync(linksDir, {recursive: true})
  const links = [
    join(linksDir, `gone_${namespace}_app-${'a'.repeat(64)}.log`),
    join(linksDir, `mine_${namespace}_app-${'b'.repeat(64)}.log`),
  ]
  symlinkSync(join(directory, 'app', '1.log'), links[0])
  symlinkSync(join(work, 'my-notes.log'), links[1])
  return {containers, sandboxes: [a.id, b.id, older.id, newer.id], directory, links}
}

async function expectAllThere(foreign: Foreign): Promise<void> {
  const {containers} = await client.runtime('listContainers', {filter: {}})
  const ids = new Set(containers.map((container) => container.id))
  expect(foreign.containers.filter((id) => !ids.has(id))).toEqual([])
  const {items} = await client.runtime('listPodSandbox', {filter: {labelSelector: {[PodLabel.namespace]: namespace}}})
  expect(foreign.sandboxes.filter((id) => !items.some((sandbox) => sandbox.id === id))).toEqual([])
  expect(existsSync(join(foreign.directory, 'app', '0.log'))).toBe(true)
  for (const link of foreign.links) expect(lstatSync(link).isSymbolicLink()).toBe(true)
}

/** podctl's own pod, crash-looping: `app` exited at attempts 0 and 1 (the second after one sync), `web` running. */
async function podctlCrashLoop(): Promise<{uid: string; app: string[]}> {
  const manifest = join(work, 'crash.yaml')
  writeFileSync(
    manifest,
    [
      'apiVersion: v1',
      'kind: Pod',
      `metadata: {name: crash, namespace: ${namespace}}`,
      'spec:',
      '  restartPolicy: Always',
      '  containers:',
      `  - {name: app, image: "${lab().busybox}", command: [sh, -c, "echo crashed; exit 1"]}`,
      `  - {name: web, image: "${lab().busybox}", command: [sh, -c, "trap 'exit 0' TERM; while true; do sleep 1; done"]}`,
      '',
    ].join('\n'),
  )
  const run = await podctl(['run', '-f', manifest, '--wait', 'none', '-q', '-o', 'json'], {env})
  expect(run.code, run.stderr).toBe(0)
  const uid: string = JSON.parse(run.stdout).pods[0].uid
  const instances = async () =>
    (await client.runtime('listContainers', {filter: {labelSelector: {[PodLabel.uid]: uid, [ContainerLabel.name]: 'app'}}})).containers
  const exited = (count: number) =>
    until(`${count} exited instances of podctl's app`, async () => {
      const now = await instances()
      return now.length === count && now.every((container) => container.state === 'CONTAINER_EXITED') ? now : undefined
    })
  await exited(1)
  const sync = await podctl(['sync', 'crash', '-n', namespace], {env})
  expect(sync.code, sync.stderr).toBe(0)
  const both = await exited(2)
  return {uid, app: [...both].sort((x, y) => (x.metadata?.attempt ?? 0) - (y.metadata?.attempt ?? 0)).map((container) => container.id)}
}

let foreign: Foreign
let ours: {uid: string; app: string[]}

beforeAll(async () => {
  foreign = await foreignObjects()
  ours = await podctlCrashLoop()
}, 180_000)

describe("podctl gc beside crictl's objects, a foreign log directory and a user's link", () => {
  it('--dry-run says what would go and why, and counts what it leaves alone', async () => {
    const dry = await podctl(['gc', ...SCOPE, '--dry-run', '-o', 'json'], {env})
    expect(dry.code, dry.stderr).toBe(0)
    const plan = JSON.parse(dry.stdout)
    expect(plan.containers.map((container: {id: string}) => container.id)).toEqual([ours.app[0]])
    expect(plan.reasons).toEqual([
      {
        kind: 'container',
        object: ours.app[0],
        why:
          'made by podctl (io.podctl.containerType annotation); ' +
          `an older dead instance of app in pod crash_${namespace} (the newest dead one stays)`,
      },
    ])
    // Exactly this namespace's other objects: nothing of another test's was considered.
    expect(plan.leftAlone).toEqual([
      {kind: 'container', why: NOT_PODCTL, count: 5},
      {kind: 'sandbox', why: NOT_PODCTL, count: 1},
      {kind: 'pod log directory', why: 'not made by podctl (no .podctl-pod.json)', count: 1},
      {kind: 'log link', why: `not a link podctl makes (it points outside ${logRoot})`, count: 1},
      {kind: 'log link', why: 'not made by podctl (no .podctl-pod.json)', count: 1},
    ])
    const text = await podctl(['gc', ...SCOPE, '--dry-run'], {env})
    expect(text.stdout).toContain(`  why: made by podctl (io.podctl.containerType annotation); an older dead instance of app`)
    expect(text.stdout).toContain(`left alone: 5 dead containers: ${NOT_PODCTL}\n`)
    await expectAllThere(foreign)
  })

  it("collects podctl's older dead instance with its log and link, and leaves every other tool's object alone", async () => {
    const {status} = await client.runtime('containerStatus', {containerId: ours.app[0]})
    const oldLog = status!.logPath
    expect(existsSync(oldLog)).toBe(true)
    const oldLink = readdirSync(linksDir).find((name) => name.endsWith(`-${ours.app[0]}.log`))
    expect(oldLink).toBeDefined()

    const gc = await podctl(['gc', ...SCOPE, '-o', 'json'], {env})
    expect(gc.code, gc.stderr).toBe(0)
    const result = JSON.parse(gc.stdout)
    expect(result).toMatchObject({sandboxes: [], podLogDirectories: [], containerLogLinks: [], failures: []})
    expect(result.containers.map((container: {id: string; logPath: string}) => [container.id, container.logPath])).toEqual([
      [ours.app[0], oldLog],
    ])
    const {containers} = await client.runtime('listContainers', {filter: {labelSelector: {[PodLabel.uid]: ours.uid}}})
    expect(containers.map((container) => container.id)).not.toContain(ours.app[0])
    expect(containers.map((container) => container.id)).toContain(ours.app[1])
    expect(existsSync(oldLog)).toBe(false)
    expect(existsSync(join(linksDir, oldLink!))).toBe(false)
    await expectAllThere(foreign)

    const again = await podctl(['gc', ...SCOPE], {env})
    expect(again.stdout).toBe('nothing to collect\nimages: left alone (--image-gc-high-threshold 100)\n')
    await expectAllThere(foreign)
  })

  it("a supervisor's collection, round after round, leaves them alone too while it collects its own pod's", async () => {
    const args = [BIN, 'sync', '--watch', '--all', ...SCOPE, '--gc-period', '1s']
    const agent = startAgent([process.execPath, ...args], env)
    try {
      // The supervisor restarts podctl's crash loop; its collection then removes the older dead instances.
      await until('a round that collected podctl’s own dead instance', () => agent.output().includes('GarbageCollected'), {
        timeoutMs: 60_000,
      })
      await expectAllThere(foreign)
      // A few more rounds (one a second); whatever their number, each looked at the same objects.
      await sleep(3000)
      await expectAllThere(foreign)
    } finally {
      expect(await agent.stop(), agent.output()).toBe(0)
    }

    expect(agent.output()).not.toMatch(/ContainerGCFailed|ImageGCFailed/)
    await expectAllThere(foreign)
    const kill = await podctl(['kill', 'crash', '-n', namespace, '--force'], {env})
    expect(kill.code, kill.stderr).toBe(0)
  }, 120_000)
})
