/**
 * podctl gc against the in-process fake runtime: which dead containers, sandboxes, log files and
 * images go (and that the rest stays), --dry-run, -n, the threshold checks, and what users see.
 */
import {existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, beforeEach, describe, expect, it} from 'vitest'

import {ExitCode} from '../../src/lib/errors.js'
import {PullRecords, pullRecordsDir} from '../../src/lib/images/pull-records.js'
import {currentSession, currentVantage, sessionLabels} from '../../src/lib/kube/session.js'
import {LIBRARY_SESSION_LABEL} from '../../src/lib/kubelet/workers/gone-sessions.js'
import {type FakeContainer, FakePodRuntime} from '../support/fake-pod-runtime.js'
import {endpointEnv, podctl, ROOT} from '../support/podctl.js'

const fake = new FakePodRuntime()
const dir = mkdtempSync(join(tmpdir(), 'podctl-gc-command-'))
const podDirRoot = join(dir, 'pods')
const logsRoot = join(dir, 'logs')
const linksDir = join(dir, 'containers')
let env: Record<string, string | undefined>
const run = (...args: string[]) => podctl(['gc', ...args], {env})
/** Leaves images alone, so a test about containers makes no image call. */
const NO_IMAGES = ['--image-gc-high-threshold', '100', '--image-gc-low-threshold', '99']

beforeAll(async () => {
  await fake.start()
  env = endpointEnv(fake.client.runtimeEndpoint, {
    PODCTL_POD_DIR_ROOT: podDirRoot,
    PODCTL_POD_LOGS_ROOT: logsRoot,
    PODCTL_CONTAINER_LOGS_DIR: linksDir,
  })
})

beforeEach(() => {
  fake.reset()
  rmSync(dir, {recursive: true, force: true})
  mkdirSync(linksDir, {recursive: true})
})

afterAll(async () => {
  await fake.close()
  rmSync(dir, {recursive: true, force: true})
})

/** What podctl writes on every sandbox it makes (its restart policy, its pod directory). */
const podctlSandbox = (uid: string) => ({'io.podctl.restartPolicy': 'Always', 'io.podctl.podDirectory': `${podDirRoot}/${uid}`})

let counter = 0
/**
 * A container of pod `name` in `namespace` (sandbox made on first use) with a real log file, made
 * by podctl (its annotations), or by crictl with the kubelet's labels when `maker` says so.
 */
function addContainer(
  pod: {name: string; namespace: string},
  name: string,
  attempt: number,
  state: FakeContainer['state'],
  maker: 'podctl' | 'crictl' = 'podctl',
): FakeContainer {
  const uid = `uid-${pod.name}`
  const sandbox =
    [...fake.sandboxes.values()].find((candidate) => candidate.metadata.uid === uid) ??
    fake.addSandbox({name: pod.name, namespace: pod.namespace, uid, attempt: 0}, maker === 'podctl' ? podctlSandbox(uid) : {})
  const logPath = join(logsRoot, `${pod.namespace}_${pod.name}_${uid}`, name, `${attempt}.log`)
  mkdirSync(join(logPath, '..'), {recursive: true})
  writeFileSync(logPath, `log of ${name} ${attempt}\n`)
  const id = `c${String(++counter).padStart(63, '0')}`
  const container: FakeContainer = {
    id,
    podSandboxId: sandbox.id,
    metadata: {name, attempt},
    image: {image: 'busybox:1.36'},
    imageRef: 'sha256:busybox',
    state,
    createdAt: String(BigInt(Date.now() - 60_000) * 1_000_000n + BigInt(counter)),
    startedAt: '0',
    finishedAt: '0',
    exitCode: 1,
    reason: 'Error',
    labels: {
      'io.kubernetes.pod.name': pod.name,
      'io.kubernetes.pod.namespace': pod.namespace,
      'io.kubernetes.pod.uid': uid,
      'io.kubernetes.container.name': name,
    },
    annotations: maker === 'podctl' ? {'io.podctl.containerType': 'app'} : {},
    mounts: [],
    logPath,
  }
  fake.containers.set(id, container)
  return container
}

const web = {name: 'web', namespace: 'shop'}

describe('podctl gc: containers', () => {
  it('keeps the running instance and the newest dead one per container name; older ones go with their log files', async () => {
    const dead = [0, 1, 2, 3].map((attempt) => addContainer(web, 'app', attempt, 'CONTAINER_EXITED'))
    const running = addContainer(web, 'app', 4, 'CONTAINER_RUNNING')
    const sidecar = addContainer(web, 'log', 0, 'CONTAINER_EXITED')
    const result = await run(...NO_IMAGES, '-o', 'json')
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    const document = JSON.parse(result.stdout)
    expect(document.containers.map((c: {attempt: number}) => c.attempt)).toEqual([2, 1, 0])
    expect(document.containers[0]).toEqual({
      id: dead[2].id,
      name: 'app',
      attempt: 2,
      state: 'CONTAINER_EXITED',
      pod: 'web_shop',
      podUid: 'uid-web',
      podSandboxId: dead[2].podSandboxId,
      logPath: dead[2].logPath,
    })
    expect(document).toMatchObject({dryRun: false, sandboxes: [], podLogDirectories: [], failures: [], leftAlone: []})
    expect(document.reasons.map((reason: {kind: string; object: string}) => [reason.kind, reason.object])).toEqual(
      dead
        .slice(0, 3)
        .reverse()
        .map((container) => ['container', container.id]),
    )
    expect(document.images).toMatchObject({ran: false, highThresholdPercent: 100, removed: []})
    expect([...fake.containers.keys()].sort()).toEqual([dead[3].id, running.id, sidecar.id].sort())
    for (const gone of dead.slice(0, 3)) expect(existsSync(gone.logPath!)).toBe(false)
    for (const kept of [dead[3], running, sidecar]) expect(existsSync(kept.logPath!)).toBe(true)
    expect(fake.methods().filter((method) => method.endsWith('mage') || method.startsWith('image') || method === 'listImages')).toEqual([])
  })

  it('says what it removed in one line each, and that nothing is left to collect the second time', async () => {
    const old = addContainer(web, 'app', 0, 'CONTAINER_EXITED')
    addContainer(web, 'app', 1, 'CONTAINER_EXITED')
    const first = await run(...NO_IMAGES)
    expect(first.code).toBe(0)
    expect(first.stdout).toBe(
      `removed container app (attempt 0, ${old.id.slice(0, 13)}) of pod web_shop and its log ${old.logPath}\n` +
        'images: left alone (--image-gc-high-threshold 100)\n',
    )
    const second = await run(...NO_IMAGES)
    expect(second.stdout).toBe('nothing to collect\nimages: left alone (--image-gc-high-threshold 100)\n')
  })

  it('--dry-run lists what would go and removes nothing', async () => {
    const old = addContainer(web, 'app', 0, 'CONTAINER_EXITED')
    addContainer(web, 'app', 1, 'CONTAINER_EXITED')
    const result = await run(...NO_IMAGES, '--dry-run')
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(/^would remove container app \(attempt 0, /)
    expect(fake.containers.size).toBe(2)
    expect(existsSync(old.logPath!)).toBe(true)
    expect(fake.methods()).not.toContain('removeContainer')
  })

  it('-n touches only that namespace', async () => {
    const other = {name: 'db', namespace: 'store'}
    addContainer(web, 'app', 0, 'CONTAINER_EXITED')
    addContainer(web, 'app', 1, 'CONTAINER_EXITED')
    addContainer(other, 'app', 0, 'CONTAINER_EXITED')
    addContainer(other, 'app', 1, 'CONTAINER_EXITED')
    const result = await run(...NO_IMAGES, '-n', 'store', '-o', 'json')
    expect(result.code).toBe(0)
    expect(JSON.parse(result.stdout).containers.map((c: {pod: string}) => c.pod)).toEqual(['db_store'])
    expect(fake.containers.size).toBe(3)
  })

  it("removes a pod's older sandbox once it is not ready and empty, never the newest", async () => {
    const first = fake.addSandbox({name: 'web', namespace: 'shop', uid: 'u', attempt: 0}, podctlSandbox('u'))
    const second = fake.addSandbox({name: 'web', namespace: 'shop', uid: 'u', attempt: 1}, podctlSandbox('u'))
    first.state = 'SANDBOX_NOTREADY'
    second.state = 'SANDBOX_NOTREADY'
    const result = await run(...NO_IMAGES, '-o', 'json')
    expect(result.code).toBe(0)
    expect(JSON.parse(result.stdout).sandboxes).toEqual([{id: first.id, pod: 'web_shop', podUid: 'u', attempt: 0}])
    expect([...fake.sandboxes.keys()]).toEqual([second.id])
  })

  it("removes a deleted pod's log directory podctl made (no sandbox, no record), not a live, recorded or other tool's one", async () => {
    addContainer(web, 'app', 0, 'CONTAINER_RUNNING')
    const gone = join(logsRoot, 'shop_gone_uid-gone')
    const recorded = join(logsRoot, 'shop_kept_uid-kept')
    const foreign = join(logsRoot, 'shop_theirs_uid-theirs')
    for (const path of [gone, recorded, foreign]) mkdirSync(path, {recursive: true})
    // podctl marks the directories it makes (as run's sandbox step writes it); the kubelet's or crictl's have no mark.
    for (const [path, uid] of [
      [gone, 'uid-gone'],
      [recorded, 'uid-kept'],
    ])
      writeFileSync(join(path, '.podctl-pod.json'), JSON.stringify({madeBy: 'podctl', uid, runtimeEndpoint: fake.client.runtimeEndpoint}))
    mkdirSync(join(podDirRoot, 'uid-kept'), {recursive: true})
    writeFileSync(join(podDirRoot, 'uid-kept', 'pod.json'), '{}')
    // Only directories unchanged for a minute go (a `run` makes its directory before its sandbox).
    const old = Date.now() / 1000 - 120
    for (const path of [gone, recorded, foreign]) utimesSync(path, old, old)
    const result = await run(...NO_IMAGES, '-o', 'json')
    expect(result.code).toBe(0)
    const document = JSON.parse(result.stdout)
    expect(document.podLogDirectories).toEqual([gone])
    expect(document.leftAlone).toEqual([{kind: 'pod log directory', why: 'not made by podctl (no .podctl-pod.json)', count: 1}])
    expect(readdirSync(logsRoot).sort()).toEqual(['shop_kept_uid-kept', 'shop_theirs_uid-theirs', 'shop_web_uid-web'])
  })

  it("leaves crictl's exited containers and older sandbox alone (two pods with an app container, one with two attempts)", async () => {
    const first = {name: 'one', namespace: 'shop'}
    const second = {name: 'two', namespace: 'shop'}
    const crictl = [
      addContainer(first, 'app', 0, 'CONTAINER_EXITED', 'crictl'),
      addContainer(first, 'app', 1, 'CONTAINER_EXITED', 'crictl'),
      addContainer(second, 'app', 0, 'CONTAINER_EXITED', 'crictl'),
    ]
    const older = fake.addSandbox({name: 'two', namespace: 'shop', uid: 'uid-two', attempt: 1})
    older.state = 'SANDBOX_NOTREADY'
    const ours = [addContainer(web, 'app', 0, 'CONTAINER_EXITED'), addContainer(web, 'app', 1, 'CONTAINER_EXITED')]
    const result = await run(...NO_IMAGES, '-o', 'json')
    expect(result.code).toBe(0)
    const document = JSON.parse(result.stdout)
    expect(document.containers.map((c: {id: string}) => c.id)).toEqual([ours[0].id])
    expect(document.sandboxes).toEqual([])
    expect(document.leftAlone).toEqual([
      {kind: 'container', why: 'not made by podctl (no io.podctl annotations, no podctl record)', count: 3},
      {kind: 'sandbox', why: 'not made by podctl (no io.podctl annotations, no podctl record)', count: 1},
    ])
    for (const container of crictl) expect(fake.containers.has(container.id)).toBe(true)
    expect(fake.sandboxes.has(older.id)).toBe(true)
    for (const container of crictl) expect(existsSync(container.logPath!)).toBe(true)
    expect(fake.methods().filter((method) => method.startsWith('remove') || method.startsWith('stop'))).toEqual(['removeContainer'])
  })

  it('--dry-run says why each object would go, and what it leaves alone', async () => {
    const old = addContainer(web, 'app', 0, 'CONTAINER_EXITED')
    addContainer(web, 'app', 1, 'CONTAINER_EXITED')
    addContainer({name: 'tool', namespace: 'shop'}, 'app', 0, 'CONTAINER_EXITED', 'crictl')
    addContainer({name: 'tool', namespace: 'shop'}, 'app', 1, 'CONTAINER_EXITED', 'crictl')
    const result = await run(...NO_IMAGES, '--dry-run')
    expect(result.code).toBe(0)
    expect(result.stdout).toBe(
      `would remove container app (attempt 0, ${old.id.slice(0, 13)}) of pod web_shop and its log ${old.logPath}\n` +
        '  why: made by podctl (io.podctl.containerType annotation); ' +
        'an older dead instance of app in pod web_shop (the newest dead one stays)\n' +
        'left alone: 2 dead containers: not made by podctl (no io.podctl annotations, no podctl record)\n' +
        'images: left alone (--image-gc-high-threshold 100)\n',
    )
    expect(fake.containers.size).toBe(4)
  })
})

describe('podctl gc: images', () => {
  const addImage = (id: string, size: number, extra: {pinned?: boolean} = {}) =>
    fake.images.set(id, {
      id,
      repoTags: [`registry.test/${id.slice(7)}:1`],
      repoDigests: [],
      size: String(size),
      pinned: Boolean(extra.pinned),
    })
  /** Any filesystem with data on it is at 1% or more: the repository's. */
  const PAST_HIGH = ['--image-gc-high-threshold', '1', '--image-gc-low-threshold', '0']

  it('past the high threshold removes unused, unpinned images podctl pulled; keeps those in use and those others pulled', async () => {
    fake.imageFsMountpoint = ROOT
    addContainer(web, 'app', 0, 'CONTAINER_EXITED')
    addImage('sha256:busybox', 5_000_000)
    addImage('sha256:unused', 3_000_000)
    addImage('sha256:pause', 1_000_000, {pinned: true})
    addImage('sha256:crictls', 2_000_000)
    // podctl's image manager records what it pulls (images/pull-records.ts); crictl's pull has no record.
    const pulls = new PullRecords(pullRecordsDir(podDirRoot, fake.client.runtimeEndpoint))
    for (const id of ['sha256:busybox', 'sha256:unused', 'sha256:pause'])
      await pulls.record({imageId: id, imageRef: id, image: `registry.test/${id.slice(7)}:1`, pulledMs: Date.now()})
    const young = await run(...PAST_HIGH, '-o', 'json')
    expect(young.code).toBe(0)
    // First seen just now: younger than the default 2m minimum age.
    expect(JSON.parse(young.stdout).images.removed).toEqual([])

    const result = await run(...PAST_HIGH, '--minimum-image-ttl-duration', '0')
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(
      /^removed image registry\.test\/unused:1 \(3MB\)\nimage filesystem .*: \d+% used, now \d+% \(high threshold 1%, low 0%\)\n$/,
    )
    const shortfall = String.raw`needed to free \d+ bytes to reach 0%, but only 3000000 bytes of unused images were eligible`
    expect(result.stderr).toMatch(new RegExp(`^Warning: image filesystem \\d+% used \\(high threshold 1%\\): ${shortfall}\n$`))
    expect([...fake.images.keys()].sort()).toEqual(['sha256:busybox', 'sha256:crictls', 'sha256:pause'])
  })

  it('refuses a low threshold not below the high one, naming both flags', async () => {
    const result = await run('--image-gc-high-threshold', '80', '--image-gc-low-threshold', '80')
    expect(result.code).toBe(ExitCode.USAGE)
    expect(result.stderr).toBe(
      'Error: --image-gc-low-threshold 80 must be below --image-gc-high-threshold 80; lower the low threshold or raise the high one\n',
    )
    const percent = await run('--image-gc-high-threshold', '120')
    expect(percent.code).toBe(ExitCode.USAGE)
    expect(percent.stderr).toBe('Error: --image-gc-high-threshold "120" is not a percentage; use a whole number 0 to 100\n')
    expect(fake.methods()).toEqual([])
  })
})

describe('podctl gc: pods of library sessions that are gone', () => {
  // A test process of this boot and pid namespace that is gone: no live pid has started 1 tick after boot.
  const goneSession = {...sessionLabels({pid: 999_999, startTicks: 1, ...currentVantage()}), [LIBRARY_SESSION_LABEL]: 'vitest-3'}
  const liveSession = {...sessionLabels(currentSession()), [LIBRARY_SESSION_LABEL]: ''}

  function libraryPod(name: string, labels: Record<string, string>, maker: 'podctl' | 'crictl' = 'podctl') {
    const container = addContainer({name, namespace: 'ci'}, 'app', 0, 'CONTAINER_RUNNING', maker)
    Object.assign(fake.sandboxes.get(container.podSandboxId)!.labels, labels)
    return container
  }

  it('--dry-run lists the pods whose session is gone and removes nothing; gc kills them, and leaves live and foreign ones', async () => {
    const orphan = libraryPod('orphan', goneSession)
    const live = libraryPod('live', liveSession)
    const foreign = libraryPod('theirs', goneSession, 'crictl')

    const dry = await run(...NO_IMAGES, '--dry-run')
    expect(dry.code).toBe(0)
    expect(dry.stdout.split('\n').slice(0, 2)).toEqual([
      'would remove pod orphan_ci',
      "  why: podctl's library pod (io.podctl.library.worker) whose session, pid 999999, is gone",
    ])
    expect(fake.methods().filter((method) => method.startsWith('stop') || method.startsWith('remove'))).toEqual([])

    const result = await run(...NO_IMAGES, '-o', 'json')
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    const document = JSON.parse(result.stdout)
    expect(document.pods).toEqual([{pod: 'orphan_ci', session: 'pid 999999'}])
    expect(document.reasons[0]).toEqual({
      kind: 'pod',
      object: 'orphan_ci',
      why: "podctl's library pod (io.podctl.library.worker) whose session, pid 999999, is gone",
    })
    expect([...fake.sandboxes.keys()].sort()).toEqual([live.podSandboxId, foreign.podSandboxId].sort())
    expect([...fake.containers.keys()].sort()).toEqual([live.id, foreign.id].sort())
    expect(fake.containers.has(orphan.id)).toBe(false)
    expect(existsSync(join(logsRoot, 'ci_orphan_uid-orphan'))).toBe(false)
    expect(existsSync(live.logPath!)).toBe(true)
  })

  it('-n takes only that namespace', async () => {
    libraryPod('orphan', goneSession)
    const result = await run(...NO_IMAGES, '-n', 'other', '-o', 'json')
    expect(result.code).toBe(0)
    expect(JSON.parse(result.stdout).pods).toEqual([])
    expect(fake.sandboxes.size).toBe(1)
  })
})
