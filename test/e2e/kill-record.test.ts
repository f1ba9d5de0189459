import {existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {PodLabel} from '../../src/lib/kube/labels.js'
import {lab, labClient, labEnv, sandboxesIn, uniqueNamespace} from '../support/lab.js'
import {useLabNamespace} from '../support/lab-namespace.js'
import {podctl} from '../support/podctl.js'

/**
 * `kill` of a pod whose sandboxes someone else (a kubelet, crictl) removed behind podctl's back:
 * its record — pod.json, the pod directory, the log directory and its links — goes, the kill says
 * so and exits 0, and a later `sync --all` finds nothing to bring back.
 */
const client = labClient()
const namespace = uniqueNamespace('kill-record')
const work = mkdtempSync(join(tmpdir(), 'podctl-kill-record-'))
const podDirRoot = join(work, 'pods')
const logsRoot = join(work, 'logs')
const linksDir = join(work, 'links')
const env = labEnv({PODCTL_POD_DIR_ROOT: podDirRoot, PODCTL_POD_LOGS_ROOT: logsRoot, PODCTL_CONTAINER_LOGS_DIR: linksDir})

useLabNamespace(client, namespace, work)

/** `podctl run -f` of a one-container pod; its uid. */
async function run(name: string): Promise<string> {
  const path = join(work, `${name}.yaml`)
  writeFileSync(
    path,
    `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: ${namespace}, labels: {tier: ${name}}}
spec:
  terminationGracePeriodSeconds: 1
  volumes: [{name: scratch, emptyDir: {}}]
  containers:
  - name: app
    image: ${lab().busybox}
    command: [sh, -c, 'echo up; trap "exit 0" TERM; while true; do sleep 1; done']
    volumeMounts: [{name: scratch, mountPath: /scratch}]
`,
  )
  const result = await podctl(['run', '-f', path, '-q', '-o', 'json'], {env})
  expect(result.code, result.stderr).toBe(0)
  const {uid} = JSON.parse(result.stdout).pods[0]
  expect(existsSync(join(podDirRoot, uid, 'pod.json'))).toBe(true)
  return uid
}

/** What a kubelet or crictl does: StopPodSandbox and RemovePodSandbox straight through the CRI, no podctl. */
async function removeBehindPodctl(uid: string): Promise<void> {
  const {items} = await client.runtime('listPodSandbox', {filter: {labelSelector: {[PodLabel.uid]: uid}}})
  expect(items.length).toBeGreaterThan(0)
  for (const sandbox of items) {
    await client.runtime('stopPodSandbox', {podSandboxId: sandbox.id})
    await client.runtime('removePodSandbox', {podSandboxId: sandbox.id})
  }
}

const logDirectory = (name: string, uid: string) => join(logsRoot, `${namespace}_${name}_${uid}`)
const links = (name: string) => (existsSync(linksDir) ? readdirSync(linksDir).filter((link) => link.startsWith(`${name}_`)) : [])

describe('kill of a pod gone from the runtime', () => {
  it('removes its record, says so, exits 0; sync --all then brings nothing back', async () => {
    const uid = await run('web')
    expect(existsSync(logDirectory('web', uid))).toBe(true)
    expect(links('web')).toHaveLength(1)
    await removeBehindPodctl(uid)
    expect(existsSync(join(podDirRoot, uid, 'pod.json'))).toBe(true)

    const kill = await podctl(['kill', 'web', '-n', namespace], {env})
    expect(kill.stderr).toBe('')
    expect(kill.code).toBe(0)
    expect(kill.stdout).toBe(`web_${namespace}: gone from the runtime; removed its record\n`)
    expect(existsSync(join(podDirRoot, uid))).toBe(false)
    expect(existsSync(logDirectory('web', uid))).toBe(false)
    expect(links('web')).toEqual([])

    const sync = await podctl(['sync', '--all', '-n', namespace, '-q', '-o', 'json'], {env})
    expect(sync.code, sync.stderr).toBe(0)
    expect(JSON.parse(sync.stdout)).toEqual({pods: []})
    expect(await sandboxesIn(client, namespace)).toEqual([])

    // Nothing is left of it now: not found again, unless told to ignore that.
    const again = await podctl(['kill', 'web', '-n', namespace], {env})
    expect(again.code).toBe(5)
    expect(again.stderr).toMatch(/pod "web" not found/)
    const ignored = await podctl(['kill', 'web', '-n', namespace, '--ignore-not-found'], {env})
    expect(ignored.code).toBe(0)
    expect(ignored.stdout).toBe('')
  })

  it('by name_namespace with -o json: an item with recordOnly, no sandboxes, nothing stopped', async () => {
    const uid = await run('api')
    await removeBehindPodctl(uid)

    const kill = await podctl(['kill', `api_${namespace}`, '-o', 'json'], {env})
    expect(kill.code, kill.stderr).toBe(0)
    expect(JSON.parse(kill.stdout)).toEqual({
      items: [
        {pod: `api_${namespace}`, sandboxIds: [], containersStopped: 0, removed: true, recordOnly: true, durationMs: expect.any(Number)},
      ],
      failures: [],
    })
    expect(existsSync(join(podDirRoot, uid))).toBe(false)
  })

  it('stopp leaves the record (not found, and says how to drop it); kill then removes it', async () => {
    const uid = await run('kept')
    await removeBehindPodctl(uid)

    const stopp = await podctl(['stopp', 'kept', '-n', namespace], {env})
    expect(stopp.code).toBe(5)
    expect(stopp.stderr).toContain(
      `pod kept_${namespace} is gone from the runtime; its record stays (podctl kill kept_${namespace} removes it)`,
    )
    expect(existsSync(join(podDirRoot, uid, 'pod.json'))).toBe(true)

    const kill = await podctl(['kill', `kept_${namespace}`], {env})
    expect(kill.code, kill.stderr).toBe(0)
    expect(existsSync(join(podDirRoot, uid))).toBe(false)
  })

  it("--all kills the live pods and removes the gone ones' records, never another runtime's", async () => {
    const [goneUid, liveUid] = [await run('gone'), await run('live')]
    await removeBehindPodctl(goneUid)
    // A pod of another runtime sharing the pod directory root, and gone from this one as from every runtime podctl sees.
    const foreign = join(podDirRoot, 'foreign-uid')
    mkdirSync(foreign, {recursive: true})
    const record = {runtimeEndpoint: 'unix:///run/elsewhere/containerd.sock', name: 'foreign', namespace, uid: 'foreign-uid'}
    writeFileSync(join(foreign, 'pod.json'), JSON.stringify({...record, containers: [], initContainers: []}), {mode: 0o600})

    const kill = await podctl(['kill', '--all', '-n', namespace, '--force'], {env})
    expect(kill.code, kill.stderr).toBe(0)
    expect(kill.stdout).toContain(`gone_${namespace}: gone from the runtime; removed its record\n`)
    expect(kill.stdout).toMatch(new RegExp(`^live_${namespace}: 1 container stopped, removed`, 'm'))
    for (const uid of [goneUid, liveUid]) expect(existsSync(join(podDirRoot, uid))).toBe(false)
    expect(existsSync(join(foreign, 'pod.json'))).toBe(true)
    expect(await sandboxesIn(client, namespace)).toEqual([])

    // The foreign record is not this runtime's pod: by name it is not found.
    const byName = await podctl(['kill', 'foreign', '-n', namespace], {env})
    expect(byName.code).toBe(5)
    expect(existsSync(join(foreign, 'pod.json'))).toBe(true)
  })
})
