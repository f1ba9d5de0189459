import {existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, describe, expect, it} from 'vitest'

import type {CriClient} from '../../../../src/lib/cri/client.js'
import {recordDesiredPod} from '../../../../src/lib/kubelet/config/desired-state.js'
import {SupervisorLocks, supervisorOf} from '../../../../src/lib/kubelet/config/supervisor-lock.js'
import {findGoneRecords, matchRecords, type RecordSelection, removeGoneRecords} from '../../../../src/lib/kubelet/records/kill-records.js'
import type {PodModel} from '../../../../src/lib/manifest/model.js'

const A = 'unix:///run/a/containerd.sock'
const B = 'unix:///run/b/containerd.sock'

const pod = (name: string, namespace: string, uid: string, labels: Record<string, string> = {}) =>
  ({name, namespace, uid, labels, containers: [], initContainers: [], volumes: []}) as unknown as PodModel

const bases: string[] = []
afterAll(() => {
  for (const base of bases) rmSync(base, {recursive: true, force: true})
})

function roots() {
  const base = mkdtempSync(join(tmpdir(), 'podctl-kill-records-'))
  bases.push(base)
  return {podDirRoot: join(base, 'pods'), logsRoot: join(base, 'logs')}
}

/** A runtime at A whose sandboxes are those of `live` (pod uids) at each ListPodSandbox; the calls are counted. */
function runtime(live: () => string[]) {
  let lists = 0
  const client = {
    runtimeEndpoint: A,
    async runtime(method: string) {
      if (method !== 'listPodSandbox') throw new Error(`unexpected ${method}`)
      lists++
      return {items: live().map((uid) => ({id: `sb-${uid}`, metadata: {name: 'x', namespace: 'ns', uid, attempt: 0}}))}
    },
  }
  return {client: client as unknown as CriClient, lists: () => lists}
}

const names = (selection: RecordSelection, records: PodModel[]) => {
  const found = matchRecords(records, selection)
  return {pods: [...found.pods.keys()], matched: Object.fromEntries(found.matched)}
}

describe('matchRecords', () => {
  const records = [
    pod('web', 'default', 'u1'),
    pod('web', 'prod', 'u2', {app: 'web'}),
    pod('db', 'prod', 'u3'),
    pod('web', 'default', 'u4'),
  ]

  it('matches a name in the namespace (default "default"), else name_namespace, as sandboxes are matched', () => {
    expect(names({refs: ['web']}, records)).toEqual({pods: ['web_default'], matched: {web: 'web_default'}})
    expect(names({refs: ['web'], namespace: 'prod'}, records)).toEqual({pods: ['web_prod'], matched: {web: 'web_prod'}})
    expect(names({refs: ['db_prod', 'ghost']}, records)).toEqual({pods: ['db_prod'], matched: {db_prod: 'db_prod'}})
    // name_namespace with another --namespace names nothing.
    expect(names({refs: ['db_prod'], namespace: 'default'}, records)).toEqual({pods: [], matched: {}})
  })

  it('gathers every record of a pod (one per uid), once however many references name it', () => {
    const found = matchRecords(records, {refs: ['web', 'web_default']})
    expect(found.pods.get('web_default')?.map((record) => record.uid)).toEqual(['u1', 'u4'])
  })

  it('with --all takes every record of the namespace (a glob too); with labels only those carrying them', () => {
    expect(names({refs: [], all: true}, records).pods).toEqual(['web_default', 'web_prod', 'db_prod'])
    expect(names({refs: [], all: true, namespace: 'pr*'}, records).pods).toEqual(['web_prod', 'db_prod'])
    expect(names({refs: [], labels: {app: 'web'}}, records).pods).toEqual(['web_prod'])
  })

  it('selects nothing without references, --all or labels (no reference left to look up is not --all)', () => {
    expect(names({refs: []}, records)).toEqual({pods: [], matched: {}})
    expect(names({refs: [], labels: {}}, records)).toEqual({pods: [], matched: {}})
  })
})

describe('findGoneRecords and removeGoneRecords', () => {
  it('removes the named records of this runtime that have no sandbox, and nothing else', async () => {
    const {podDirRoot, logsRoot} = roots()
    await recordDesiredPod(podDirRoot, pod('web', 'default', 'gone'), A)
    await recordDesiredPod(podDirRoot, pod('web', 'default', 'other'), B)
    await recordDesiredPod(podDirRoot, pod('db', 'default', 'live'), A)
    await recordDesiredPod(podDirRoot, pod('web', 'default', 'legacy'))
    mkdirSync(join(logsRoot, 'default_web_gone', 'app'), {recursive: true})
    const {client} = runtime(() => ['live'])

    const found = await findGoneRecords(client, podDirRoot, {refs: ['web', 'db']})
    expect(Object.fromEntries(found.matched)).toEqual({web: 'web_default'})
    const killed: string[] = []
    const outcome = await removeGoneRecords(client, found, {podDirRoot, logsRoot, onKilled: (result) => killed.push(result.pod)})
    expect(outcome.failures).toEqual([])
    expect(outcome.items).toEqual([
      {pod: 'web_default', sandboxIds: [], containersStopped: 0, removed: true, recordOnly: true, durationMs: expect.any(Number)},
    ])
    expect(killed).toEqual(['web_default'])
    expect(existsSync(join(podDirRoot, 'gone'))).toBe(false)
    expect(existsSync(join(logsRoot, 'default_web_gone'))).toBe(false)
    // Another runtime's record, a record naming no runtime and a live pod's record all stay.
    for (const uid of ['other', 'legacy', 'live']) expect(existsSync(join(podDirRoot, uid, 'pod.json'))).toBe(true)
    // The pass lock was let go.
    expect(readdirSync(join(podDirRoot, '.locks'))).toEqual([])
  })

  it('removes a record a live supervisor holds: killed means no longer wanted', async () => {
    const {podDirRoot, logsRoot} = roots()
    await recordDesiredPod(podDirRoot, pod('web', 'default', 'u1'), A)
    const locks = new SupervisorLocks(podDirRoot, 'podctl sync --watch')
    expect((await locks.take('u1')).held).toBe(true)
    expect(await supervisorOf(podDirRoot, 'u1')).toBeDefined()
    const {client} = runtime(() => [])

    const outcome = await removeGoneRecords(client, await findGoneRecords(client, podDirRoot, {refs: ['web']}), {podDirRoot, logsRoot})
    expect(outcome.items.map((item) => item.pod)).toEqual(['web_default'])
    expect(existsSync(join(podDirRoot, 'u1'))).toBe(false)
    await locks.release()
  })

  it('leaves a record whose pod was started again meanwhile, and says so', async () => {
    const {podDirRoot, logsRoot} = roots()
    await recordDesiredPod(podDirRoot, pod('web', 'default', 'u1'), A)
    let live: string[] = []
    const {client, lists} = runtime(() => live)
    const found = await findGoneRecords(client, podDirRoot, {refs: ['web']})
    live = ['u1']

    const outcome = await removeGoneRecords(client, found, {podDirRoot, logsRoot})
    expect(outcome.items).toEqual([])
    expect(outcome.failures.map(({pod, error}) => [pod, error.message])).toEqual([
      ['web_default', 'pod web_default was started again while kill removed its record; kill it again'],
    ])
    expect(existsSync(join(podDirRoot, 'u1', 'pod.json'))).toBe(true)
    expect(lists()).toBe(2)
  })

  it('asks the runtime nothing when there are no records, and takes no lock when nothing was found', async () => {
    const {podDirRoot, logsRoot} = roots()
    const {client, lists} = runtime(() => [])
    const found = await findGoneRecords(client, podDirRoot, {refs: [], all: true})
    expect(found.pods.size).toBe(0)
    expect(await removeGoneRecords(client, found, {podDirRoot, logsRoot})).toEqual({items: [], failures: []})
    expect(lists()).toBe(0)
    expect(existsSync(podDirRoot)).toBe(false)
  })
})

describe('matchRecords: kill -f workloads', () => {
  it("matches a workload's records by namespace, labels and name form, as <kind>/<name>", () => {
    const records = [
      pod('web-h-bcdfg', 'prod', 'u1', {app: 'web', 'pod-template-hash': 'h'}),
      pod('web-h-hjklm', 'default', 'u2', {app: 'web', 'pod-template-hash': 'h'}),
      pod('web-manual', 'prod', 'u3', {app: 'web', 'pod-template-hash': 'h'}),
      pod('web-h-npqrs', 'prod', 'u4', {app: 'web', 'pod-template-hash': 'other'}),
    ]
    const web = {kind: 'Deployment', name: 'web', labels: {app: 'web', 'pod-template-hash': 'h'}, podName: /^web-h-[a-z2-9]{5}$/}
    const found = matchRecords(records, {refs: [], namespace: 'prod', workloads: [web]})
    expect([...found.pods.keys()]).toEqual(['web-h-bcdfg_prod'])
    expect(found.matched).toEqual(new Map([['Deployment/web', 'web-h-bcdfg_prod']]))
    expect(matchRecords(records, {refs: [], workloads: [{...web, namespace: 'default'}]}).pods.size).toBe(1)
  })
})
