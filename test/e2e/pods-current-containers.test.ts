/**
 * `pods`' CONTAINERS column counts a pod's current containers as kubectl's READY does (issue 39,
 * 8a): a healthy pod whose init container finished and whose app container was restarted once is
 * 2/2, not 2/4 (the finished init container and the exited first attempt are history).
 */
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {cleanupNamespace, lab, labClient, labEnv, sandboxesIn, uniqueNamespace} from '../support/lab.js'
import {podctl} from '../support/podctl.js'
import {pullBusybox} from '../support/pods.js'

const client = labClient()
const namespace = uniqueNamespace('e2e-pods-current')
const podDirRoot = mkdtempSync(join(tmpdir(), 'podctl-pods-current-'))
const env = labEnv({PODCTL_POD_LOGS_ROOT: lab().logRoot, PODCTL_POD_DIR_ROOT: podDirRoot, PODCTL_BACKOFF_BASE_MS: '300'})
const columns = (line: string) => line.trim().split(/\s{3,}/)

// The first attempt leaves a mark in the pod's emptyDir and exits 1; the second finds it and runs on.
const CRASH_ONCE = '[ -e /data/ran ] && exec sleep 3600; touch /data/ran; exit 1'
const manifest = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {name: 'web', namespace},
  spec: {
    terminationGracePeriodSeconds: 0,
    volumes: [{name: 'data', emptyDir: {}}],
    initContainers: [{name: 'setup', image: lab().busybox, command: ['true']}],
    containers: [
      {name: 'app', image: lab().busybox, command: ['sh', '-c', CRASH_ONCE], volumeMounts: [{name: 'data', mountPath: '/data'}]},
      {name: 'log', image: lab().busybox, command: ['sleep', '3600']},
    ],
  },
}

beforeAll(async () => {
  await pullBusybox(client)
  // --settle 0: the run restarts the crashed first attempt (with the shrunk back-off) until it is seen running.
  const result = await podctl(['run', '--settle', '0', '-q', '-f', '-'], {env, input: JSON.stringify(manifest)})
  expect(result.code, result.stderr).toBe(0)
}, 120_000)

afterAll(async () => {
  await cleanupNamespace(client, namespace)
  expect(await sandboxesIn(client, namespace)).toEqual([])
  rmSync(podDirRoot, {recursive: true, force: true})
  client.close()
})

describe('podctl pods: CONTAINERS counts the current containers', () => {
  it('a running pod with a finished init container and a restarted container is 2/2', async () => {
    // What the runtime holds: the init container and both attempts of app, beside log.
    const [sandboxId] = await sandboxesIn(client, namespace)
    const {containers} = await client.runtime('listContainers', {filter: {podSandboxId: sandboxId}})
    const held = containers.map((c) => `${c.metadata?.name}#${c.metadata?.attempt} ${c.state}`).sort()
    expect(held).toEqual(['app#0 CONTAINER_EXITED', 'app#1 CONTAINER_RUNNING', 'log#0 CONTAINER_RUNNING', 'setup#0 CONTAINER_EXITED'])

    const result = await podctl(['pods', '-n', namespace], {env})
    expect(result.code, result.stderr).toBe(0)
    const [header, row, ...rest] = result.stdout.trimEnd().split('\n')
    expect(columns(header)).toEqual(['POD ID', 'NAME', 'NAMESPACE', 'STATE', 'CONTAINERS', 'ATTEMPT', 'CREATED'])
    expect(rest).toEqual([])
    expect(columns(row).slice(0, 6)).toEqual([sandboxId.slice(0, 13), 'web', namespace, 'Ready', '2/2', '0'])
  })

  it('counts a stopped container of the pod as not running', async () => {
    const [sandboxId] = await sandboxesIn(client, namespace)
    const {containers} = await client.runtime('listContainers', {filter: {podSandboxId: sandboxId}})
    const log = containers.find((c) => c.metadata?.name === 'log')!
    await client.runtime('stopContainer', {containerId: log.id, timeout: '0'})
    const result = await podctl(['pods', '-n', namespace, '-o', 'wide'], {env})
    expect(result.code, result.stderr).toBe(0)
    expect(columns(result.stdout.trimEnd().split('\n')[1])[4]).toBe('1/2')
  })
})
