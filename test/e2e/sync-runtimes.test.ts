import {existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {FakePodRuntime} from '../support/fake-pod-runtime.js'
import {lab, labClient, labEnv, uniqueNamespace} from '../support/lab.js'
import {useLabNamespace} from '../support/lab-namespace.js'
import {podctl} from '../support/podctl.js'

/**
 * Every runtime shares the pod directory root. A pod recorded in the lab keeps its record, its
 * directory and its containers when `sync --all` runs against another runtime (an in-process CRI
 * server with none of the lab's pods); that runtime's own lost pod comes back there, in its directory.
 */
const client = labClient()
const namespace = uniqueNamespace('runtimes')
const work = mkdtempSync(join(tmpdir(), 'podctl-runtimes-'))
const podDirRoot = join(work, 'pods')
const env = labEnv({
  PODCTL_POD_LOGS_ROOT: join(work, 'logs'),
  PODCTL_POD_DIR_ROOT: podDirRoot,
  PODCTL_CONTAINER_LOGS_DIR: join(work, 'links'),
})
const other = new FakePodRuntime()

useLabNamespace(client, namespace, work)
beforeAll(async () => {
  await other.start()
})
afterAll(async () => {
  await other.close()
})

function record(uid: string, name: string, runtimeEndpoint?: string): void {
  mkdirSync(join(podDirRoot, uid, 'volumes'), {recursive: true})
  const spec = {labels: {}, annotations: {}, restartPolicy: 'Always', dnsPolicy: 'Default', volumes: [], containers: [], initContainers: []}
  const pod = {...(runtimeEndpoint ? {runtimeEndpoint} : {}), name, namespace, uid, ...spec}
  writeFileSync(join(podDirRoot, uid, 'pod.json'), JSON.stringify(pod), {mode: 0o600})
}

async function running(pod: string): Promise<Array<{id: string; state: string}>> {
  const ps = await podctl(['ps', '-n', namespace, '--pod', pod, '-o', 'json'], {env})
  expect(ps.code).toBe(0)
  return (JSON.parse(ps.stdout).containers as Array<{id: string; state: string}>).map(({id, state}) => ({id, state}))
}

describe('sync --all against another runtime', () => {
  it("leaves this runtime's pods and records alone, and brings back only its own lost pod", async () => {
    const path = join(work, 'keep.yaml')
    writeFileSync(
      path,
      `apiVersion: v1
kind: Pod
metadata: {name: keep, namespace: ${namespace}}
spec:
  terminationGracePeriodSeconds: 1
  volumes: [{name: scratch, emptyDir: {}}]
  containers:
  - name: app
    image: ${lab().busybox}
    command: [sh, -c, 'echo kept > /scratch/f; trap "exit 0" TERM; while true; do sleep 1; done']
    volumeMounts: [{name: scratch, mountPath: /scratch}]
`,
    )
    const run = await podctl(['run', '-f', path, '-q', '-o', 'json'], {env})
    expect(run.code, run.stderr).toBe(0)
    const {uid} = JSON.parse(run.stdout).pods[0]
    const kept = join(podDirRoot, uid, 'pod.json')
    expect(JSON.parse(readFileSync(kept, 'utf8')).runtimeEndpoint).toBe(`unix://${realpathSync(lab().endpoint.replace(/^unix:\/\//, ''))}`)
    const before = await running('keep')
    expect(before.map((container) => container.state)).toEqual(['CONTAINER_RUNNING'])

    const otherEndpoint = other.client.runtimeEndpoint
    // The other runtime's own pod, gone from it (its record names it as a bare path), and a record
    // from before records named a runtime.
    record('gone-uid', 'gone', otherEndpoint.replace(/^unix:\/\//, ''))
    record('legacy-uid', 'legacy')

    const sync = await podctl(['sync', '--all', '-n', namespace, '-r', otherEndpoint, '-q', '-o', 'json'], {env})
    expect(sync.code, sync.stderr).toBe(0)
    expect(JSON.parse(sync.stdout)).toEqual({
      pods: [{pod: 'gone', namespace, uid: 'gone-uid', did: ['recreated the pod sandbox (attempt 0)']}],
    })
    expect(existsSync(join(podDirRoot, 'gone-uid', 'pod.json'))).toBe(true)
    // The lab's pod: its record, its directory (the emptyDir's data) and its container are all still there.
    expect(JSON.parse(readFileSync(kept, 'utf8'))).toMatchObject({name: 'keep', uid})
    expect(readFileSync(join(podDirRoot, uid, 'volumes', 'kubernetes.io~empty-dir', 'scratch', 'f'), 'utf8')).toBe('kept\n')
    expect(existsSync(join(podDirRoot, 'legacy-uid', 'pod.json'))).toBe(true)
    expect(await running('keep')).toEqual(before)

    // Against the lab, the pod is in sync; the legacy record (no sandbox in the lab) is not the lab's to sweep either.
    const labSync = await podctl(['sync', '--all', '-n', namespace, '-q', '-o', 'json'], {env})
    expect(labSync.code, labSync.stderr).toBe(0)
    expect(JSON.parse(labSync.stdout)).toEqual({pods: [{pod: 'keep', namespace, uid, did: []}]})
    expect(existsSync(join(podDirRoot, 'legacy-uid', 'pod.json'))).toBe(true)

    const kill = await podctl(['kill', 'keep', '-n', namespace, '--force'], {env})
    expect(kill.code, kill.stderr).toBe(0)
    expect(existsSync(join(podDirRoot, uid))).toBe(false)
  })
})
