import {existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {AlreadyExistsError} from '../../../../src/lib/errors.js'

import type {PodEvent} from '../../../../src/lib/kube/events.js'
import {
  claimLegacyRecord,
  readDesiredPod,
  readPodRecord,
  recordDesiredPod,
  recordOfAnotherRuntimeError,
} from '../../../../src/lib/kubelet/config/desired-state.js'
import {forgetRecordedPod, removeRecordedPodDirectory} from '../../../../src/lib/kubelet/volumes/pod-dirs.js'
import {recordEndpoint, recordOwner} from '../../../../src/lib/kubelet/core/record-owner.js'
import {runPods} from '../../../../src/lib/kubelet/run/run-pods.js'
import {SupervisorLocks} from '../../../../src/lib/kubelet/config/supervisor-lock.js'
import {applyPod} from '../../../../src/lib/kubelet/workers/apply-pod.js'
import {ownSelection, syncPods} from '../../../../src/lib/kubelet/workers/sync-pods.js'
import {type Selected, withLostPods} from '../../../../src/lib/kubelet/workers/lost-pods.js'
import {FakePodRuntime} from '../../../support/fake-pod-runtime.js'

const A = 'unix:///run/a/containerd.sock'
const B = 'unix:///run/b/containerd.sock'

function pod(name: string, uid: string) {
  return {name, namespace: 'ns', uid, containers: [], initContainers: [], volumes: []} as never
}

function roots() {
  const base = mkdtempSync(join(tmpdir(), 'podctl-record-owner-'))
  return {podDirRoot: join(base, 'pods'), logsRoot: join(base, 'logs')}
}

/** A runtime at `endpoint` whose only sandboxes are `uids` (ListPodSandbox; nothing else is called). */
function runtimeAt(endpoint: string, uids: string[] = []) {
  const items = uids.map((uid, index) => ({
    id: `sb-${index}`,
    metadata: {name: `p-${uid}`, namespace: 'ns', uid, attempt: 0},
    createdAt: 1,
  }))
  return {runtimeEndpoint: endpoint, runtime: async () => ({items})} as never
}

function legacy(root: string, uid: string): void {
  mkdirSync(join(root, uid), {recursive: true})
  writeFileSync(join(root, uid, 'pod.json'), JSON.stringify({name: `p-${uid}`, namespace: 'ns', uid, containers: [], initContainers: []}))
}

describe('record owner: endpoints', () => {
  it('compares endpoints normalised: unix:///path, unix:/path and /path are one runtime', () => {
    expect(recordEndpoint('/run/a/containerd.sock')).toBe(A)
    expect(recordEndpoint('unix:/run/a/containerd.sock')).toBe(A)
    expect(recordOwner('/run/a/containerd.sock', A)).toBe('this')
    expect(recordOwner(A, 'unix:/run/a/containerd.sock')).toBe('this')
    expect(recordOwner(A, B)).toBe('other')
    expect(recordOwner(undefined, B)).toBe('legacy')
    expect(recordOwner('', B)).toBe('legacy')
  })

  it('resolves the socket path while it exists: a symlinked directory (/var/run → /run) is the same runtime', () => {
    const base = mkdtempSync(join(tmpdir(), 'podctl-endpoint-'))
    mkdirSync(join(base, 'run'))
    writeFileSync(join(base, 'run', 'cri.sock'), '')
    symlinkSync(join(base, 'run'), join(base, 'var-run'))
    expect(recordEndpoint(`unix://${base}/var-run/cri.sock`)).toBe(`unix://${base}/run/cri.sock`)
    expect(recordOwner(`${base}/var-run/cri.sock`, `unix://${base}/run/cri.sock`)).toBe('this')
    // Gone sockets compare as written.
    expect(recordOwner(`${base}/var-run/gone.sock`, `unix://${base}/run/gone.sock`)).toBe('other')
  })
})

describe('pod records name their runtime', () => {
  it('run/sync write the runtime into pod.json; a read from another runtime finds no record', async () => {
    const {podDirRoot} = roots()
    await recordDesiredPod(podDirRoot, pod('web', 'u1'), '/run/a/containerd.sock')
    expect(JSON.parse(readFileSync(join(podDirRoot, 'u1', 'pod.json'), 'utf8')).runtimeEndpoint).toBe(A)
    // The model read back is the pod, without the record's runtime.
    expect(await readDesiredPod(podDirRoot, 'u1', A)).toEqual(pod('web', 'u1'))
    expect(await readDesiredPod(podDirRoot, 'u1', B)).toBeUndefined()
    expect((await readPodRecord(podDirRoot, 'u1'))?.runtimeEndpoint).toBe(A)
  })

  it('a legacy record (no runtime) is read by whichever runtime has its sandbox, and claimed by it', async () => {
    const {podDirRoot} = roots()
    legacy(podDirRoot, 'u2')
    expect(await readDesiredPod(podDirRoot, 'u2', B)).toMatchObject({name: 'p-u2'})
    await claimLegacyRecord(podDirRoot, 'u2', B)
    expect((await readPodRecord(podDirRoot, 'u2'))?.runtimeEndpoint).toBe(B)
    expect(statSync(join(podDirRoot, 'u2', 'pod.json')).mode & 0o777).toBe(0o600)
    // Claimed once: another runtime does not claim it again.
    await claimLegacyRecord(podDirRoot, 'u2', A)
    expect((await readPodRecord(podDirRoot, 'u2'))?.runtimeEndpoint).toBe(B)
  })

  it('refuses to record a uid whose directory holds another runtime’s record', async () => {
    const {podDirRoot} = roots()
    await recordDesiredPod(podDirRoot, pod('web', 'u3'), A)
    expect((await recordOfAnotherRuntimeError(podDirRoot, 'u3', B))?.message).toContain(`uid u3 is recorded for pod web_ns of runtime ${A}`)
    expect(await recordOfAnotherRuntimeError(podDirRoot, 'u3', A)).toBeUndefined()
    expect(await recordOfAnotherRuntimeError(podDirRoot, 'nothing-here', B)).toBeUndefined()
  })
})

describe('no command acts on a record of another runtime', () => {
  it('sync --all of runtime B brings back only B’s lost pods: A’s records and legacy records are not its pods', async () => {
    const settings = roots()
    await recordDesiredPod(settings.podDirRoot, pod('a', 'ua'), A)
    await recordDesiredPod(settings.podDirRoot, pod('b', 'ub'), B)
    await recordDesiredPod(settings.podDirRoot, pod('c', 'uc'), B)
    legacy(settings.podDirRoot, 'ul')
    const selection = {refs: [], all: true}
    const listed = {pods: [{fullName: 'c_ns', sandboxes: [{id: 's', metadata: {name: 'c', namespace: 'ns', uid: 'uc'}}]}], failures: []}
    const onB = await withLostPods(listed as unknown as Selected, {podDirRoot: settings.podDirRoot, runtime: B, selection})
    expect(onB.pods.map((target) => [target.fullName, target.lostUid])).toEqual([
      ['c_ns', undefined],
      ['b_ns', 'ub'],
    ])
    // Runtime A (named by its bare socket path) has lost its pod too; B's stay B's.
    const onA = await withLostPods(
      {pods: [], failures: []},
      {podDirRoot: settings.podDirRoot, runtime: '/run/a/containerd.sock', selection},
    )
    expect(onA.pods).toEqual([{fullName: 'a_ns', sandboxes: [], lostUid: 'ua'}])
    // A name that matched no sandbox but names a lost pod is no longer a failure; another name still is.
    const named = {
      pods: [],
      failures: [
        {ref: 'b_ns', error: 'not found'},
        {ref: 'zzz', error: 'not found'},
      ],
    }
    const byName = await withLostPods(named, {podDirRoot: settings.podDirRoot, runtime: B, selection: {refs: ['b_ns', 'zzz']}})
    expect(byName).toEqual({pods: [{fullName: 'b_ns', sandboxes: [], lostUid: 'ub'}], failures: [{ref: 'zzz', error: 'not found'}]})
    for (const uid of ['ua', 'ub', 'uc', 'ul']) expect(existsSync(join(settings.podDirRoot, uid, 'pod.json'))).toBe(true)
  })

  it('sync of a pod whose record is another runtime’s leaves it alone and says whose it is', async () => {
    const settings = {...roots(), hostResolvConf: '', nodeMemoryBytes: 0}
    await recordDesiredPod(settings.podDirRoot, pod('web', 'u4'), A)
    const target = {
      fullName: 'web_ns',
      sandboxes: [{id: 's', metadata: {name: 'web', namespace: 'ns', uid: 'u4', attempt: 0}, createdAt: 1}],
    }
    const deps = {client: runtimeAt(B), images: {} as never, events() {}, signal: new AbortController().signal, parallel: 1}
    const [result] = await syncPods([target as never], settings, deps)
    expect(result).toEqual({
      pod: 'web',
      namespace: 'ns',
      uid: 'u4',
      did: [`left alone: its record in the pod directory is the pod of runtime ${A}`],
    })
  })

  it('sync of a legacy record whose sandbox this runtime has claims it, unless a supervisor follows it', async () => {
    const settings = {...roots(), hostResolvConf: '', nodeMemoryBytes: 0}
    const deps = {client: runtimeAt(B), images: {} as never, events() {}, signal: new AbortController().signal, parallel: 1}
    const target = (uid: string) =>
      ({fullName: `p-${uid}_ns`, sandboxes: [{id: uid, metadata: {name: `p-${uid}`, namespace: 'ns', uid}, createdAt: 1}]}) as never
    legacy(settings.podDirRoot, 'u6')
    legacy(settings.podDirRoot, 'u7')
    const supervisor = new SupervisorLocks(settings.podDirRoot, 'podctl sync --watch')
    expect((await supervisor.take('u7')).held).toBe(true)
    // The pass itself fails on this listing-only runtime; what matters is the record.
    await syncPods([target('u6'), target('u7')], settings, deps)
    await supervisor.release()
    expect((await readPodRecord(settings.podDirRoot, 'u6'))?.runtimeEndpoint).toBe(B)
    expect((await readPodRecord(settings.podDirRoot, 'u7'))?.runtimeEndpoint).toBeUndefined()
  })

  it('the supervisor’s selection drops pods whose record is another runtime’s, telling each once', async () => {
    const {podDirRoot} = roots()
    await recordDesiredPod(podDirRoot, pod('a', 'ua'), A)
    await recordDesiredPod(podDirRoot, pod('b', 'ub'), B)
    legacy(podDirRoot, 'ul')
    const target = (name: string, uid: string) => ({fullName: `${name}_ns`, sandboxes: [{id: uid, metadata: {uid}, createdAt: 1}]}) as never
    const events: PodEvent[] = []
    const select = ownSelection(async () => [target('a', 'ua'), target('b', 'ub'), target('l', 'ul'), target('x', 'unrecorded')], {
      podDirRoot,
      runtime: B,
      events: (event) => events.push(event),
    })
    for (let turn = 0; turn < 2; turn++) expect((await select()).map((t) => t.fullName)).toEqual(['b_ns', 'l_ns', 'x_ns'])
    expect(events.map((event) => [event.reason, event.object])).toEqual([['NotManaged', 'a_ns']])
    // Records are read again when they change: b's now names A, a's names B, l's is gone.
    await recordDesiredPod(podDirRoot, pod('b', 'ub'), A)
    await recordDesiredPod(podDirRoot, pod('a', 'ua'), B)
    rmSync(join(podDirRoot, 'ul', 'pod.json'))
    expect((await select()).map((t) => t.fullName)).toEqual(['a_ns', 'l_ns', 'x_ns'])
    expect(events.map((event) => [event.reason, event.object])).toEqual([
      ['NotManaged', 'a_ns'],
      ['NotManaged', 'b_ns'],
    ])
  })

  it('kill of a sandbox in B keeps the record and directory of A’s pod with the same uid', async () => {
    const {podDirRoot} = roots()
    await recordDesiredPod(podDirRoot, pod('web', 'u5'), A)
    const sandbox = {annotations: {'io.podctl.podDirectory': join(podDirRoot, 'u5')}, metadata: {uid: 'u5'}}
    await forgetRecordedPod(sandbox, podDirRoot, B)
    await removeRecordedPodDirectory(sandbox, podDirRoot, B)
    expect(existsSync(join(podDirRoot, 'u5', 'pod.json'))).toBe(true)
    await forgetRecordedPod(sandbox, podDirRoot, '/run/a/containerd.sock')
    expect(existsSync(join(podDirRoot, 'u5', 'pod.json'))).toBe(false)
    await removeRecordedPodDirectory(sandbox, podDirRoot, A)
    expect(existsSync(join(podDirRoot, 'u5'))).toBe(false)
  })
})

describe('run and sync -f never take over another runtime’s record (the same metadata.uid in two runtimes)', () => {
  let fake: FakePodRuntime
  beforeAll(async () => {
    fake = await new FakePodRuntime().start()
  })
  afterAll(async () => {
    await fake.close()
  })

  it('fail with AlreadyExists before anything is made, the record untouched', async () => {
    const {podDirRoot, logsRoot} = roots()
    await recordDesiredPod(podDirRoot, pod('web', 'same-uid'), A)
    const recorded = readFileSync(join(podDirRoot, 'same-uid', 'pod.json'), 'utf8')
    const model = {...(pod('web', 'same-uid') as object), restartPolicy: 'Always'} as never
    const settings = {
      wait: 'none',
      replace: false,
      keepOnFailure: false,
      remove: false,
      logsRoot,
      podDirRoot,
      hostResolvConf: '',
      nodeMemoryBytes: 0,
    }
    const deps = {images: {} as never, events() {}, signal: new AbortController().signal, parallel: 1}
    const [outcome] = await runPods(fake.client, [model], settings as never, deps as never)
    expect(outcome.failure).toBeInstanceOf(AlreadyExistsError)
    expect(outcome.failure?.message).toContain(`uid same-uid is recorded for pod web_ns of runtime ${A}`)
    const applied = await applyPod(model, [], settings as never, {...deps, client: fake.client} as never)
    expect(applied.failure).toBeInstanceOf(AlreadyExistsError)
    expect(fake.sandboxes.size).toBe(0)
    expect(readFileSync(join(podDirRoot, 'same-uid', 'pod.json'), 'utf8')).toBe(recorded)
  })
})
