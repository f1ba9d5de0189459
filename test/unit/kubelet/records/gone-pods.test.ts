import {existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, describe, expect, it} from 'vitest'

import {recordDesiredPod} from '../../../../src/lib/kubelet/config/desired-state.js'
import {goneFromRuntime, recordsOfRuntime, removePodRecord} from '../../../../src/lib/kubelet/records/gone-pods.js'
import {markPodLogDirectory} from '../../../../src/lib/kubelet/core/owned-logs.js'
import type {PodSandbox} from '../../../../src/generated/runtime/v1/api.js'

const A = 'unix:///run/a/containerd.sock'
const B = 'unix:///run/b/containerd.sock'

const pod = (name: string, uid: string) =>
  ({name, namespace: 'ns', uid, labels: {}, containers: [], initContainers: [], volumes: []}) as never

const bases: string[] = []
afterAll(() => {
  for (const base of bases) rmSync(base, {recursive: true, force: true})
})

function roots() {
  const base = mkdtempSync(join(tmpdir(), 'podctl-gone-pods-'))
  bases.push(base)
  return {podDirRoot: join(base, 'pods'), logsRoot: join(base, 'logs')}
}

describe('recordsOfRuntime', () => {
  it("lists only this runtime's records whose directory is their uid", async () => {
    const {podDirRoot} = roots()
    await recordDesiredPod(podDirRoot, pod('mine', 'u1'), A)
    await recordDesiredPod(podDirRoot, pod('theirs', 'u2'), B)
    await recordDesiredPod(podDirRoot, pod('legacy', 'u3'))
    // A pod.json copied under another uid's directory, and a directory a `run` has not recorded yet.
    mkdirSync(join(podDirRoot, 'u4'))
    writeFileSync(join(podDirRoot, 'u4', 'pod.json'), JSON.stringify({runtimeEndpoint: A, ...(pod('copied', 'u1') as object)}))
    mkdirSync(join(podDirRoot, 'u5', 'volumes'), {recursive: true})

    const records = await recordsOfRuntime(podDirRoot, '/run/a/containerd.sock')
    expect(records.map((record) => record.name)).toEqual(['mine'])
  })

  it('is empty when the root does not exist', async () => {
    expect(await recordsOfRuntime('/nonexistent/podctl-root', A)).toEqual([])
  })
})

describe('goneFromRuntime', () => {
  it('keeps the records no sandbox (of any attempt) has the uid of', () => {
    const sandboxes = [{id: 's1', metadata: {name: 'a', namespace: 'ns', uid: 'u1', attempt: 3}}] as PodSandbox[]
    const gone = goneFromRuntime([pod('a', 'u1'), pod('a', 'u0'), pod('b', 'u2')], sandboxes)
    expect(gone.map((record) => record.uid)).toEqual(['u0', 'u2'])
  })
})

describe('removePodRecord', () => {
  it('removes the pod directory, the log directory and the links into it, and only those', async () => {
    const {podDirRoot, logsRoot} = roots()
    await recordDesiredPod(podDirRoot, pod('web', 'u1'), A)
    await recordDesiredPod(podDirRoot, pod('db', 'u2'), A)
    mkdirSync(join(podDirRoot, 'u1', 'volumes', 'kubernetes.io~empty-dir', 'data'), {recursive: true})
    writeFileSync(join(podDirRoot, 'u1', 'backoff.json'), '{}')
    mkdirSync(join(logsRoot, 'ns_web_u1', 'app'), {recursive: true})
    mkdirSync(join(logsRoot, 'ns_db_u2', 'app'), {recursive: true})

    // Log links of the pod's containers (into its log directory), of another pod of the same name, and of db.
    const linksDir = join(logsRoot, '..', 'links')
    mkdirSync(linksDir)
    symlinkSync(join(logsRoot, 'ns_web_u1', 'app', '0.log'), join(linksDir, 'web_ns_app-c1.log'))
    symlinkSync(join(logsRoot, 'ns_web_u9', 'app', '0.log'), join(linksDir, 'web_ns_app-c9.log'))
    symlinkSync(join(logsRoot, 'ns_db_u2', 'app', '0.log'), join(linksDir, 'db_ns_app-c2.log'))

    await removePodRecord(pod('web', 'u1'), {podDirRoot, logsRoot, linksDir})
    expect(readdirSync(linksDir).sort()).toEqual(['db_ns_app-c2.log', 'web_ns_app-c9.log'])
    expect(existsSync(join(podDirRoot, 'u1'))).toBe(false)
    expect(existsSync(join(logsRoot, 'ns_web_u1'))).toBe(false)
    expect(existsSync(join(podDirRoot, 'u2', 'pod.json'))).toBe(true)
    expect(existsSync(join(logsRoot, 'ns_db_u2'))).toBe(true)
    // Removing again is fine: nothing is left to remove.
    await removePodRecord(pod('web', 'u1'), {podDirRoot, logsRoot, linksDir})
  })

  it("keeps a log directory podctl marked for another runtime: the same uid there is that runtime's pod", async () => {
    const {podDirRoot, logsRoot} = roots()
    await recordDesiredPod(podDirRoot, pod('web', 'u1'), A)
    mkdirSync(join(logsRoot, 'ns_web_u1', 'app'), {recursive: true})
    await markPodLogDirectory(join(logsRoot, 'ns_web_u1'), true, {uid: 'u1', runtimeEndpoint: B})
    await removePodRecord(pod('web', 'u1'), {podDirRoot, logsRoot, linksDir: join(logsRoot, '..', 'links')})
    expect(existsSync(join(podDirRoot, 'u1'))).toBe(false)
    expect(existsSync(join(logsRoot, 'ns_web_u1', 'app'))).toBe(true)
  })
})
