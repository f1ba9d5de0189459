/**
 * Image volumes (volumes[].image) on the lab's runtime: where the runtime can mount them (containerd
 * 2.1+, CRI-O 1.31+; a subPath containerd 2.2+, CRI-O 1.33+) the container sees the image's files,
 * read-only; where it cannot (containerd 1.6) `run` refuses the pod up front, naming the runtime and
 * its version, and nothing is made.
 */
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {missingFeature} from '../../src/lib/cri/runtime-releases.js'
import {cleanupNamespace, lab, labClient, labEnv, sandboxesIn, uniqueNamespace} from '../support/lab.js'
import {podctl} from '../support/podctl.js'
import {pullBusybox} from '../support/pods.js'

const client = labClient()
const namespace = uniqueNamespace('imgvol')
const podDirRoot = mkdtempSync(join(tmpdir(), 'podctl-imgvol-pods-'))
const env = labEnv({PODCTL_POD_LOGS_ROOT: lab().logRoot, PODCTL_POD_DIR_ROOT: podDirRoot})
let version: {runtimeName: string; runtimeVersion: string}

const manifest = (subPath: boolean) => `apiVersion: v1
kind: Pod
metadata: {name: tools, namespace: ${namespace}}
spec:
  terminationGracePeriodSeconds: 1
  volumes:
  - name: busybox
    image: {reference: "${lab().busybox}", pullPolicy: IfNotPresent}
  containers:
  - name: app
    image: ${lab().busybox}
    command: [sleep, "3600"]
    volumeMounts:
    - {name: busybox, mountPath: /image}${subPath ? '\n    - {name: busybox, mountPath: /image-bin, subPath: bin}' : ''}
`

beforeAll(async () => {
  await pullBusybox(client)
  version = await client.runtime('version', {version: '0.1.0'})
})

afterAll(async () => {
  await cleanupNamespace(client, namespace)
  expect(await sandboxesIn(client, namespace)).toEqual([])
  rmSync(podDirRoot, {recursive: true, force: true})
  client.close()
})

async function run(text: string) {
  return podctl(['run', '-f', '-', '--timeout', '90s', '-q'], {env, input: text})
}

async function exec(...command: string[]) {
  return podctl(['exec', '-n', namespace, 'tools/app', '--', ...command], {env})
}

describe('image volumes', () => {
  it("mounts the image's files read-only where the runtime can, and refuses the pod up front where it cannot", async () => {
    const subPath = missingFeature(version, 'imageVolumeSubPath') === undefined
    const result = await run(manifest(subPath))
    const missing = missingFeature(version, 'imageVolumes')
    if (missing) {
      expect(result.code).toBe(14)
      expect(result.stderr).toBe(`Error: pod tools_${namespace}: volume busybox: ${missing}\n`)
      expect(await sandboxesIn(client, namespace)).toEqual([])
      return
    }

    expect(result.code, result.stderr).toBe(0)
    expect((await exec('ls', '/image/bin/busybox')).stdout).toBe('/image/bin/busybox\n')
    const write = await exec('touch', '/image/written')
    expect(write.code).toBe(1)
    expect(write.stderr).toContain('Read-only file system')
    if (subPath) expect((await exec('ls', '/image-bin/busybox')).stdout).toBe('/image-bin/busybox\n')
    const kill = await podctl(['kill', '-n', namespace, 'tools'], {env})
    expect(kill.code, kill.stderr).toBe(0)
    expect(await sandboxesIn(client, namespace)).toEqual([])
  })
})
