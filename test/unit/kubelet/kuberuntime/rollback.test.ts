/**
 * A rollback removes what the failed run made, and only that: podctl's sandboxes of the pod (never
 * another tool's that shares its uid, as a crictl config's fixed uid can), and the pod's directory
 * unless another runtime's record lives in it.
 */
import {existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, beforeEach, describe, expect, it} from 'vitest'

import {discardEvents} from '../../../../src/lib/kube/events.js'
import {removePodRemains} from '../../../../src/lib/kubelet/kuberuntime/rollback.js'
import type {PodModel} from '../../../../src/lib/manifest/model.js'
import {FakePodRuntime} from '../../../support/fake-pod-runtime.js'

let fake: FakePodRuntime
const root = mkdtempSync(join(tmpdir(), 'podctl-rollback-'))
const podDirRoot = join(root, 'pods')
const UID = 'hdishd83djaidwnduwk28bcsb'
const pod = {name: 'nginx-sandbox', namespace: 'default', uid: UID} as PodModel

beforeAll(async () => {
  fake = await new FakePodRuntime().start()
})

beforeEach(() => {
  fake.reset()
  rmSync(podDirRoot, {recursive: true, force: true})
  mkdirSync(join(podDirRoot, UID), {recursive: true})
})

afterAll(async () => {
  await fake.close()
  rmSync(root, {recursive: true, force: true})
})

const metadata = {name: pod.name, namespace: pod.namespace, uid: UID}
const podctlMade = {'io.podctl.restartPolicy': 'Always', 'io.podctl.podDirectory': `${podDirRoot}/${UID}`}

describe('removePodRemains', () => {
  it("removes podctl's sandboxes of the pod and its directory; crictl's sandbox of the same uid and name stays", async () => {
    // crictl runp of crictl's own sandbox-config.json example (its fixed uid), then podctl's failed run of the same config.
    const crictls = fake.addSandbox({...metadata, attempt: 0})
    const ours = fake.addSandbox({...metadata, attempt: 1}, podctlMade)
    const removal = await removePodRemains(fake.client, pod, {events: discardEvents, podDirRoot})
    expect(removal).toMatchObject({found: true, sandboxIds: [ours.id]})
    expect([...fake.sandboxes.keys()]).toEqual([crictls.id])
    expect(existsSync(join(podDirRoot, UID))).toBe(false)
  })

  it("keeps the pod's directory when another runtime's record lives in it", async () => {
    fake.addSandbox({...metadata, attempt: 0}, podctlMade)
    writeFileSync(join(podDirRoot, UID, 'pod.json'), JSON.stringify({runtimeEndpoint: 'unix:///run/crio/crio.sock', uid: UID}))
    await removePodRemains(fake.client, pod, {events: discardEvents, podDirRoot})
    expect(fake.sandboxes.size).toBe(0)
    expect(existsSync(join(podDirRoot, UID, 'pod.json'))).toBe(true)
  })

  it("with the log root, removes the pod's log directory podctl made (the library's rollback); without, it stays", async () => {
    const logsRoot = join(root, 'logs')
    const logDirectory = join(logsRoot, `${pod.namespace}_${pod.name}_${UID}`)
    for (const podLogsRoot of [undefined, logsRoot]) {
      mkdirSync(join(logDirectory, 'app'), {recursive: true})
      writeFileSync(join(logDirectory, 'app', '0.log'), '2026-12-07T05:00:00.000000000Z stderr F crashed\n')
      fake.addSandbox({...metadata, attempt: 0}, podctlMade)
      await removePodRemains(fake.client, pod, {events: discardEvents, podDirRoot, podLogsRoot})
      expect({podLogsRoot, left: existsSync(logDirectory)}).toEqual({podLogsRoot, left: podLogsRoot === undefined})
    }
  })
})
