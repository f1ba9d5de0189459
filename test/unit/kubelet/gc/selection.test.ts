/**
 * Which containers, sandboxes, images and log directories the kubelet's garbage collection picks,
 * in what order, and the image thresholds: the pure rules of src/lib/kubelet/gc.
 */
import {mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, describe, expect, it} from 'vitest'

import {type Container, Image, type PodSandbox} from '../../../../src/generated/runtime/v1/api.js'
import {Container as ContainerMessage, PodSandbox as SandboxMessage} from '../../../../src/generated/runtime/v1/api.js'
import {collectContainers, containersToRemove} from '../../../../src/lib/kubelet/gc/container-gc.js'
import {bytesToFree, usagePercent} from '../../../../src/lib/kubelet/gc/image-fs.js'
import {freeSpace, imageCandidates, imageUsage} from '../../../../src/lib/kubelet/gc/image-gc.js'
import {ImageRecords} from '../../../../src/lib/kubelet/gc/image-records.js'
import {collectDeadLinks, collectPodLogDirectories, deadContainerLogLinks} from '../../../../src/lib/kubelet/gc/pod-logs-gc.js'
import {type GcRound, newRound} from '../../../../src/lib/kubelet/gc/round.js'
import {markPodLogDirectory, POD_LOGS_MARK} from '../../../../src/lib/kubelet/core/owned-logs.js'
import type {CriClient} from '../../../../src/lib/cri/client.js'
import {DEFAULT_CONTAINER_GC_POLICY, imageGcEnabled, validateImageGcPolicy} from '../../../../src/lib/kubelet/gc/policy.js'
import {collectSandboxes, sandboxesToRemove} from '../../../../src/lib/kubelet/gc/sandbox-gc.js'
import {UsageError} from '../../../../src/lib/errors.js'

const NOW = 1_800_000_000_000
const nanos = (ms: number) => String(BigInt(ms) * 1_000_000n)
const work = mkdtempSync(join(tmpdir(), 'podctl-gc-unit-'))
afterAll(() => rmSync(work, {recursive: true, force: true}))

type ContainerStateName = `${Container['state']}`

/** `instance` is NAME#ATTEMPT; with a uid, the kubelet's labels; podctl's annotation unless `foreign`. */
function container(
  id: string,
  instance: string,
  state: ContainerStateName,
  options: {uid?: string; ageMs?: number; foreign?: boolean} = {},
): Container {
  const [name, attempt] = [instance.split('#')[0], Number(instance.split('#')[1])]
  const labels =
    options.uid === undefined
      ? {}
      : {
          'io.kubernetes.pod.uid': options.uid,
          'io.kubernetes.pod.name': 'web',
          'io.kubernetes.pod.namespace': 'ns',
          'io.kubernetes.container.name': name,
        }
  return ContainerMessage.fromPartial({
    id,
    podSandboxId: `sb-${options.uid ?? 'none'}`,
    metadata: {name, attempt},
    state: state as Container['state'],
    createdAt: nanos(NOW - (options.ageMs ?? 60_000) + attempt),
    labels,
    annotations: options.foreign || options.uid === undefined ? {} : {'io.podctl.containerType': 'app'},
    imageRef: 'sha256:used',
    image: {image: 'busybox:1.36'},
  })
}

/** A round against a client that answers ContainerStatus only (a dry run removes nothing). */
function dryRound(extra: Partial<GcRound> = {}): GcRound {
  const client = {
    runtimeEndpoint: 'unix:///run/a.sock',
    async runtime(method: string) {
      if (method !== 'containerStatus') throw new Error(`a dry run calls no ${method}`)
      return {status: {logPath: ''}}
    },
  } as unknown as CriClient
  return {...newRound(client, {dryRun: true, nowMs: NOW, podDirRoot: join(work, 'no-records')}), ...extra}
}

const ids = (objects: ReadonlyArray<{id: string}>) => objects.map((object) => object.id)

describe('container GC (MaxPerPodContainer 1, MinAge 0)', () => {
  it('keeps the newest dead instance per pod and container name besides the running one, removing older ones oldest last', () => {
    const containers = [
      container('run', 'app#4', 'CONTAINER_RUNNING', {uid: 'u1'}),
      container('a3', 'app#3', 'CONTAINER_EXITED', {uid: 'u1'}),
      container('a1', 'app#1', 'CONTAINER_EXITED', {uid: 'u1'}),
      container('a2', 'app#2', 'CONTAINER_EXITED', {uid: 'u1'}),
      container('s0', 'sidecar#0', 'CONTAINER_EXITED', {uid: 'u1'}),
      container('b1', 'app#1', 'CONTAINER_EXITED', {uid: 'u2'}),
      container('b0', 'app#0', 'CONTAINER_CREATED', {uid: 'u2'}),
    ]
    expect(ids(containersToRemove(containers, DEFAULT_CONTAINER_GC_POLICY, NOW))).toEqual(['a2', 'a1', 'b0'])
  })

  it('orders by attempt first, then by creation time (the kubelet byAttempt)', () => {
    const older = {...container('x', 'app#2', 'CONTAINER_EXITED', {uid: 'u'}), createdAt: nanos(NOW - 1000)}
    const newer = {...container('y', 'app#1', 'CONTAINER_EXITED', {uid: 'u'}), createdAt: nanos(NOW - 10)}
    expect(ids(containersToRemove([newer, older], DEFAULT_CONTAINER_GC_POLICY, NOW))).toEqual(['y'])
    const twin = {...container('z', 'app#2', 'CONTAINER_EXITED', {uid: 'u'}), createdAt: nanos(NOW - 5)}
    expect(ids(containersToRemove([older, twin], DEFAULT_CONTAINER_GC_POLICY, NOW))).toEqual(['x'])
  })

  it('groups by the container name label, as the kubelet reads it', () => {
    const renamed = {...container('r0', 'app#0', 'CONTAINER_EXITED', {uid: 'u'}), metadata: {name: 'app-metadata', attempt: 0}}
    expect(
      ids(containersToRemove([container('r1', 'app#1', 'CONTAINER_EXITED', {uid: 'u'}), renamed], DEFAULT_CONTAINER_GC_POLICY, NOW)),
    ).toEqual(['r0'])
  })

  it("collects only podctl's containers: crictl's, unlabelled or not, are never grouped or removed, and are counted", async () => {
    const containers = [
      // crictl run twice: unlabelled containers of the same name in two pods, the kubelet's group "".
      container('n1', 'tool#1', 'CONTAINER_EXITED'),
      container('n0', 'tool#0', 'CONTAINER_EXITED'),
      // crictl create with the kubelet's labels but no podctl annotation: two attempts of one container.
      container('k1', 'app#1', 'CONTAINER_EXITED', {uid: 'crictl', foreign: true}),
      container('k0', 'app#0', 'CONTAINER_EXITED', {uid: 'crictl', foreign: true}),
      container('p1', 'app#1', 'CONTAINER_EXITED', {uid: 'podctl'}),
      container('p0', 'app#0', 'CONTAINER_EXITED', {uid: 'podctl'}),
    ]
    const round = dryRound()
    const collected = await collectContainers(round, containers, DEFAULT_CONTAINER_GC_POLICY)
    expect(collected.map((one) => one.id)).toEqual(['p0'])
    expect(round.explanation.reasons).toEqual([
      {
        kind: 'container',
        object: 'p0',
        why: 'made by podctl (io.podctl.containerType annotation); an older dead instance of app in pod web_ns (the newest dead one stays)',
      },
    ])
    expect(round.explanation.leftAloneList()).toEqual([
      {kind: 'container', why: 'not made by podctl (no io.podctl annotations, no podctl record)', count: 4},
    ])
  })

  it('leaves containers younger than MinAge and removes unknown-state ones like dead ones', () => {
    const young = container('young', 'app#0', 'CONTAINER_EXITED', {uid: 'u', ageMs: 5000})
    const newest = container('new', 'app#1', 'CONTAINER_UNKNOWN', {uid: 'u'})
    const policy = {minAgeMs: 10_000, maxPerPodContainer: 0}
    expect(ids(containersToRemove([young, newest], policy, NOW))).toEqual(['new'])
    expect(ids(containersToRemove([young, newest], {...policy, maxPerPodContainer: -1}, NOW))).toEqual([])
  })
})

function sandbox(id: string, uid: string, attempt: number, state: `${PodSandbox['state']}`): PodSandbox {
  return SandboxMessage.fromPartial({
    id,
    metadata: {name: 'web', namespace: 'ns', uid, attempt},
    state: state as PodSandbox['state'],
    createdAt: nanos(NOW + attempt),
  })
}

describe('sandbox GC', () => {
  it("removes a pod's older not-ready sandboxes that hold no container; the newest always stays", () => {
    const sandboxes = [
      sandbox('s2', 'u', 2, 'SANDBOX_NOTREADY'),
      sandbox('s1', 'u', 1, 'SANDBOX_NOTREADY'),
      sandbox('s0', 'u', 0, 'SANDBOX_NOTREADY'),
      sandbox('r0', 'r', 0, 'SANDBOX_READY'),
      sandbox('o0', 'other', 0, 'SANDBOX_NOTREADY'),
    ]
    const holding = [{...container('c', 'app#0', 'CONTAINER_EXITED', {uid: 'u'}), podSandboxId: 's0'}]
    expect(ids(sandboxesToRemove(sandboxes, holding))).toEqual(['s1'])
    expect(ids(sandboxesToRemove(sandboxes, []))).toEqual(['s1', 's0'])
  })

  it("collects only podctl's sandboxes: crictl's older, stopped, empty sandbox stays and is counted", async () => {
    const podctl = (one: PodSandbox) => ({
      ...one,
      annotations: {'io.podctl.restartPolicy': 'Always', 'io.podctl.podDirectory': `/pods/${one.metadata?.uid}`},
    })
    const sandboxes = [
      podctl(sandbox('p1', 'u', 1, 'SANDBOX_READY')),
      podctl(sandbox('p0', 'u', 0, 'SANDBOX_NOTREADY')),
      sandbox('c1', 'crictl', 1, 'SANDBOX_READY'),
      sandbox('c0', 'crictl', 0, 'SANDBOX_NOTREADY'),
    ]
    const round = dryRound()
    expect((await collectSandboxes(round, sandboxes, [])).map((one) => one.id)).toEqual(['p0'])
    expect(round.explanation.leftAloneList()).toEqual([
      {kind: 'sandbox', why: 'not made by podctl (no io.podctl annotations, no podctl record)', count: 1},
    ])
  })

  it('never removes an older sandbox that is still ready', () => {
    expect(ids(sandboxesToRemove([sandbox('n', 'u', 1, 'SANDBOX_NOTREADY'), sandbox('o', 'u', 0, 'SANDBOX_READY')], []))).toEqual([])
  })
})

function image(id: string, size: number, extra: Partial<Image> = {}): Image {
  return Image.fromPartial({id, size: String(size), repoTags: [`${id.slice(7)}:1`], ...extra})
}

describe('image GC', () => {
  it('uses the kubelet percentages: usage truncated, what reaching the low threshold frees', () => {
    expect(usagePercent(1000, 149)).toBe(86)
    expect(usagePercent(1000, 2000)).toBe(0)
    expect(bytesToFree({capacityBytes: 1000, availableBytes: 140}, 80)).toBe(60)
    expect(bytesToFree({capacityBytes: 1000, availableBytes: 300}, 80)).toBe(-100)
  })

  it('checks the thresholds as the kubelet does; 100 turns image GC off', () => {
    expect(validateImageGcPolicy({highThresholdPercent: 85, lowThresholdPercent: 80, minAgeMs: 0}).highThresholdPercent).toBe(85)
    expect(() => validateImageGcPolicy({highThresholdPercent: 80, lowThresholdPercent: 80, minAgeMs: 0})).toThrow(UsageError)
    expect(() => validateImageGcPolicy({highThresholdPercent: 80, lowThresholdPercent: 90, minAgeMs: 0})).toThrow(
      '--image-gc-low-threshold 90 must be below --image-gc-high-threshold 80; lower the low threshold or raise the high one',
    )
    expect(() => validateImageGcPolicy({highThresholdPercent: 101, lowThresholdPercent: 0, minAgeMs: 0})).toThrow(
      '--image-gc-high-threshold 101 is not a percentage; use 0 to 100',
    )
    expect(imageGcEnabled({highThresholdPercent: 100, lowThresholdPercent: 99, minAgeMs: 0})).toBe(false)
    expect(imageGcEnabled({highThresholdPercent: 99, lowThresholdPercent: 0, minAgeMs: 0})).toBe(true)
  })

  it('never picks an image a container uses (by ID, tag or digest) or a pinned one; least recently used first', async () => {
    const images = [
      image('sha256:used', 10),
      image('sha256:bytag', 10, {repoTags: ['busybox:1.36']}),
      image('sha256:pause', 10, {pinned: true}),
      image('sha256:recent', 10),
      image('sha256:stale', 10),
      image('sha256:young', 10),
    ]
    const inUse = imageUsage([container('c', 'app#0', 'CONTAINER_EXITED', {uid: 'u'})])
    const records = new ImageRecords()
    await records.detect(images.slice(0, 5), inUse, NOW - 600_000)
    await records.detect(images.slice(0, 5), (candidate) => candidate.id === 'sha256:recent' || inUse(candidate), NOW - 300_000)
    const known = await records.detect(images, inUse, NOW)
    const pulls = images.map((one) => ({imageId: one.id, imageRef: one.id, image: one.repoTags[0], pulledMs: 0}))
    expect(ids(imageCandidates(images, {inUse, records: known, pulls, minAgeMs: 120_000, nowMs: NOW}))).toEqual([
      'sha256:stale',
      'sha256:recent',
    ])
    expect(ids(imageCandidates(images, {inUse, records: known, pulls, minAgeMs: 0, nowMs: NOW}))).toEqual([
      'sha256:stale',
      'sha256:young',
      'sha256:recent',
    ])
  })

  it('never picks an image podctl did not pull on this runtime, however old and unused', async () => {
    const images = [image('sha256:crictl', 10), image('sha256:ours', 10, {repoDigests: ['registry.test/ours@sha256:d1']})]
    const known = await new ImageRecords().detect(images, () => false, NOW - 600_000)
    const pulls = [{imageId: 'sha256:elsewhere', imageRef: 'registry.test/ours@sha256:d1', image: 'registry.test/ours:1', pulledMs: 0}]
    const context = {inUse: () => false, records: known, minAgeMs: 0, nowMs: NOW}
    expect(ids(imageCandidates(images, {...context, pulls}))).toEqual(['sha256:ours'])
    expect(imageCandidates(images, {...context, pulls: []})).toEqual([])
  })

  it("counts the runtime's sandbox image as in use, as the kubelet always does", () => {
    const inUse = imageUsage([], ['registry.test/pause:3.9'])
    expect(inUse(image('sha256:pause', 1, {repoTags: ['registry.test/pause:3.9']}))).toBe(true)
    expect(inUse(image('sha256:other', 1))).toBe(false)
  })

  it('removes candidates in order until enough is freed, going on past a failed removal', async () => {
    const candidates = [image('sha256:a', 30), image('sha256:b', 50), image('sha256:c', 40), image('sha256:d', 10)]
    const remove = async (chosen: Image) =>
      chosen.id === 'sha256:b' ? undefined : {id: chosen.id, ref: '', sizeBytes: Number(chosen.size)}
    const {removed, freedBytes} = await freeSpace(candidates, 60, remove)
    expect(ids(removed)).toEqual(['sha256:a', 'sha256:c'])
    expect(freedBytes).toBe(70)
    expect((await freeSpace(candidates, 0, remove)).removed).toEqual([])
  })

  it('keeps first-seen times in its file between runs (a one-shot gc remembers)', async () => {
    const file = join(work, 'records.json')
    const first = new ImageRecords(file)
    await first.detect([image('sha256:a', 1)], () => false, NOW - 600_000)
    await first.save()
    const known = await new ImageRecords(file).detect([image('sha256:a', 1), image('sha256:b', 1)], () => false, NOW)
    expect(known.get('sha256:a')).toEqual({firstDetectedMs: NOW - 600_000, lastUsedMs: 0})
    expect(known.get('sha256:b')).toEqual({firstDetectedMs: NOW, lastUsedMs: 0})
  })
})

describe('pod log directories and dead links', () => {
  const A = 'unix:///run/a.sock'
  const logsRoot = join(work, 'logs')
  const links = join(work, 'links')

  /** A directory as `run` leaves it (marked when podctl made it), changed `ageMs` ago. */
  async function logDirectory(name: string, options: {podctl?: boolean; runtime?: string; ageMs?: number} = {}): Promise<string> {
    const path = join(logsRoot, name)
    mkdirSync(join(path, 'app'), {recursive: true})
    writeFileSync(join(path, 'app', '0.log'), 'a line\n')
    if (options.podctl !== false) await markPodLogDirectory(path, true, {uid: name.split('_')[2], runtimeEndpoint: options.runtime ?? A})
    const changed = (NOW - (options.ageMs ?? 120_000)) / 1000
    utimesSync(path, changed, changed)
    return path
  }

  it("removes podctl's directories of pods with no sandbox and no record, older than a minute, in the namespace asked", async () => {
    mkdirSync(links, {recursive: true})
    const gone = await logDirectory('a_gone_u1')
    await logDirectory('a_live_u2')
    await logDirectory('a_recorded_u3')
    await logDirectory('a_fresh_u4', {ageMs: 10_000})
    const other = await logDirectory('b_gone_u5')
    await logDirectory('a_kubelet_u6', {podctl: false})
    await logDirectory('a_crio_u7', {runtime: 'unix:///run/crio/crio.sock'})
    symlinkSync(join(gone, 'app', '0.log'), join(links, `gone_a_app-${'1'.repeat(64)}.log`))
    const scope = {logsRoot, linksDir: links, liveUids: new Set(['u2']), recordedUids: new Set(['u3'])}

    const round = dryRound()
    expect(await collectPodLogDirectories(round, scope)).toEqual({
      directories: [gone, other].sort(),
      links: [join(links, `gone_a_app-${'1'.repeat(64)}.log`)],
    })
    expect(round.explanation.leftAloneList()).toEqual([
      {kind: 'pod log directory', why: 'its pod is recorded for another runtime (unix:///run/crio/crio.sock)', count: 1},
      {kind: 'pod log directory', why: `not made by podctl (no ${POD_LOGS_MARK})`, count: 1},
    ])
    expect((await collectPodLogDirectories(dryRound({namespace: 'b'}), scope)).directories).toEqual([other])
  })

  it('finds links whose log file is gone, except those of running containers', async () => {
    const dir = join(work, 'dead-links')
    mkdirSync(dir, {recursive: true})
    const live = join(work, 'live.log')
    writeFileSync(live, '')
    const id = (digit: string) => digit.repeat(64)
    symlinkSync(live, join(dir, `web_ns_app-${id('1')}.log`))
    symlinkSync(join(work, 'gone.log'), join(dir, `web_ns_app-${id('2')}.log`))
    symlinkSync(join(work, 'gone.log'), join(dir, `web_ns_app-${id('3')}.log`))
    symlinkSync(join(work, 'gone.log'), join(dir, `web_other_app-${id('4')}.log`))
    const running = [{...container(id('3'), 'app#0', 'CONTAINER_RUNNING', {uid: 'u'})}]
    expect((await deadContainerLogLinks(dir, running)).sort()).toEqual([
      join(dir, `web_ns_app-${id('2')}.log`),
      join(dir, `web_other_app-${id('4')}.log`),
    ])
    expect(await deadContainerLogLinks(dir, running, 'ns')).toEqual([join(dir, `web_ns_app-${id('2')}.log`)])
  })

  it("removes only the dead links into podctl's log directories; a user's or a kubelet's dead link stays", async () => {
    const dir = join(work, 'owned-links')
    mkdirSync(dir, {recursive: true})
    const ours = await logDirectory('c_ours_u8')
    const id = (digit: string) => digit.repeat(64)
    symlinkSync(join(ours, 'app', '3.log'), join(dir, `ours_c_app-${id('5')}.log`))
    symlinkSync(join(logsRoot, 'c_kubelet_u9', 'app', '0.log'), join(dir, `kubelet_c_app-${id('6')}.log`))
    symlinkSync('/home/someone/gone.log', join(dir, `user_c_app-${id('7')}.log`))
    const round = dryRound()
    expect(await collectDeadLinks(round, {linksDir: dir, logsRoot, remaining: [], alreadyGone: []})).toEqual([
      join(dir, `ours_c_app-${id('5')}.log`),
    ])
    expect(round.explanation.leftAloneList().map((entry) => [entry.why, entry.count])).toEqual([
      [`not a link podctl makes (it points outside ${logsRoot})`, 1],
      [`not made by podctl (no ${POD_LOGS_MARK})`, 1],
    ])
  })
})
