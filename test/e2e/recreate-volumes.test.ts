import {execFileSync} from 'node:child_process'
import {existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {cleanupNamespace, lab, labClient, labEnv, sandboxesIn, uniqueNamespace} from '../support/lab.js'
import {hostMountsUnder} from '../support/objects.js'
import {podctl} from '../support/podctl.js'
import {pullBusybox} from '../support/pods.js'

/**
 * A pod's volumes outlive a sandbox recreation, as in the kubelet: the pod keeps its uid, so its
 * emptyDir volumes (on the disk and on a tmpfs) keep their data when `sync` recreates a dead
 * sandbox and when `sync -f` recreates the pod for a sandbox-level change (its configMap volume
 * written again in place); `kill` removes it all.
 */
const client = labClient()
const namespace = uniqueNamespace('recreate-vol')
const work = mkdtempSync(join(tmpdir(), 'podctl-recreate-'))
const podDirRoot = join(work, 'pods')
const env = labEnv({PODCTL_POD_LOGS_ROOT: join(work, 'logs'), PODCTL_POD_DIR_ROOT: podDirRoot})
const SERVE = 'trap "exit 0" TERM; while true; do sleep 1; done'

function manifest(hostPort: number, setting: string, image = lab().busybox): string {
  const path = join(work, `keep-${hostPort}-${setting}.yaml`)
  const text = `apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: ${namespace}}
data: {setting: ${setting}}
---
apiVersion: v1
kind: Pod
metadata: {name: keep, namespace: ${namespace}}
spec:
  terminationGracePeriodSeconds: 2
  volumes:
  - {name: cache, emptyDir: {}}
  - {name: mem, emptyDir: {medium: Memory, sizeLimit: 8Mi}}
  - {name: config, configMap: {name: settings}}
  containers:
  - name: app
    image: ${image}
    command: [sh, -c, ${JSON.stringify(SERVE)}]
    ports: [{containerPort: 8080, hostPort: ${hostPort}}]
    volumeMounts: [{name: cache, mountPath: /cache}, {name: mem, mountPath: /mem}, {name: config, mountPath: /config}]
`
  writeFileSync(path, text)
  return path
}

async function exec(script: string): Promise<string> {
  const result = await podctl(['exec', '-n', namespace, 'keep/app', '--', 'sh', '-c', script], {env})
  expect(result.code, result.stderr).toBe(0)
  return result.stdout
}

async function status(): Promise<{uid: string; sandboxes: Array<{id: string; attempt: number; state: string}>}> {
  const result = await podctl(['status', 'keep', '-n', namespace, '-o', 'json'], {env})
  expect(result.code, result.stderr).toBe(0)
  return JSON.parse(result.stdout)
}

beforeAll(async () => {
  await pullBusybox(client)
})

afterAll(async () => {
  await cleanupNamespace(client, namespace)
  for (const point of hostMountsUnder(work)) execFileSync('umount', ['-l', point])
  expect(await sandboxesIn(client, namespace)).toEqual([])
  client.close()
  rmSync(work, {recursive: true, force: true})
})

describe('a sandbox recreation keeps the pod volumes (same uid)', () => {
  it('sync after the sandbox died, then sync -f with a new hostPort: the emptyDir files stay; kill removes the pod directory', async () => {
    const run = await podctl(['run', '-f', manifest(18_441, 'one'), '-q', '-o', 'json'], {env})
    expect(run.code, run.stderr).toBe(0)
    const [pod] = JSON.parse(run.stdout).pods as Array<{uid: string; sandboxId: string}>
    const podDir = join(podDirRoot, pod.uid)
    expect(await exec('echo disk > /cache/file; echo memory > /mem/file; cat /cache/file /mem/file')).toBe('disk\nmemory\n')

    // The sandbox dies under podctl (its containers with it): sync recreates it with attempt 1.
    await client.runtime('stopPodSandbox', {podSandboxId: pod.sandboxId})
    const sync = await podctl(['sync', 'keep', '-n', namespace], {env})
    expect(sync.code, sync.stderr).toBe(0)
    expect(sync.stdout).toContain('recreated the pod sandbox (attempt 1)')
    const afterSync = await status()
    expect(afterSync.uid).toBe(pod.uid)
    expect(afterSync.sandboxes.map((sandbox) => [sandbox.attempt, sandbox.state])).toEqual([[1, 'Ready']])
    expect(await exec('cat /cache/file /mem/file')).toBe('disk\nmemory\n')
    // The recorded pod names its ConfigMap without its data: the volume keeps what the run wrote.
    expect(await exec('cat /config/setting')).toBe('one')
    // The Memory emptyDir stayed one tmpfs (mounted once, not again on top).
    const mem = `${podDir}/volumes/kubernetes.io~empty-dir/mem`
    expect(hostMountsUnder(work).filter((point) => point === mem)).toHaveLength(1)

    // A sandbox-level change: the pod is recreated (attempt 2), same uid, same data.
    const apply = await podctl(['sync', '-f', manifest(18_442, 'two')], {env})
    expect(apply.code, apply.stderr).toBe(0)
    expect(apply.stdout).toContain('changed: sandbox: portMappings changed')
    expect(apply.stdout).toContain('recreated the pod sandbox (attempt 2)')
    const afterApply = await status()
    expect(afterApply.uid).toBe(pod.uid)
    expect(afterApply.sandboxes.map((sandbox) => [sandbox.attempt, sandbox.state])).toEqual([[2, 'Ready']])
    expect(await exec('cat /cache/file /mem/file')).toBe('disk\nmemory\n')
    // The configMap volume is written again from the new manifest, in place.
    expect(await exec('cat /config/setting')).toBe('two')

    // Removing the pod removes its volumes: no directory, no mount left.
    const kill = await podctl(['kill', 'keep', '-n', namespace, '--grace-period', '0'], {env})
    expect(kill.code, kill.stderr).toBe(0)
    expect(existsSync(podDir)).toBe(false)
    expect(hostMountsUnder(work)).toEqual([])
    expect(await sandboxesIn(client, namespace)).toEqual([])
  })

  it('a failed recreation (sync -f, an image that cannot be pulled) keeps the stopped sandbox and the emptyDir files', async () => {
    const run = await podctl(['run', '-f', manifest(18_443, 'one'), '-q', '-o', 'json'], {env})
    expect(run.code, run.stderr).toBe(0)
    const [pod] = JSON.parse(run.stdout).pods as Array<{uid: string}>
    const file = join(podDirRoot, pod.uid, 'volumes/kubernetes.io~empty-dir/cache/file')
    await exec('echo disk > /cache/file')

    const absent = lab().busybox.replace(/\/busybox:[^/]+$/, '/absent-image:0')
    // --timeout ends the pull back-off at once (its next step, 10 s, would end after it).
    const failed = await podctl(['sync', '-f', manifest(18_444, 'two', absent), '--timeout', '10s'], {env})
    expect(failed.code, failed.stderr).toBe(10)
    expect(failed.stderr).toContain('the pod keeps its volumes and its stopped sandbox (attempt 0)')
    expect(readFileSync(file, 'utf8')).toBe('disk\n')
    const after = await status()
    expect(after.sandboxes.map((sandbox) => [sandbox.attempt, sandbox.state])).toEqual([[0, 'NotReady']])

    // The next sync with a manifest that works recreates the pod: same uid, same files.
    const fixed = await podctl(['sync', '-f', manifest(18_443, 'one')], {env})
    expect(fixed.code, fixed.stderr).toBe(0)
    expect(fixed.stdout).toContain('recreated the pod sandbox (attempt 1)')
    expect((await status()).uid).toBe(pod.uid)
    expect(await exec('cat /cache/file')).toBe('disk\n')

    const kill = await podctl(['kill', 'keep', '-n', namespace, '--grace-period', '0'], {env})
    expect(kill.code, kill.stderr).toBe(0)
    expect(existsSync(join(podDirRoot, pod.uid))).toBe(false)
    expect(hostMountsUnder(work)).toEqual([])
    expect(await sandboxesIn(client, namespace)).toEqual([])
  })
})
