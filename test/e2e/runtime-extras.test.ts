/**
 * runtime-config, metricsp and checkpoint against the lab. containerd 1.6 implements none of their
 * RPCs: each must end in one line naming containerd, its version and the RPC, with exit 6, as podctl
 * and as crictl. containerd 2.x and CRI-O answer RuntimeConfig with the lab's cgroup driver; what
 * they do with checkpoints and pod metrics is not checked here.
 */
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {ExitCode} from '../../src/lib/errors.js'
import {createPod, pullBusybox, removePodLogs, runContainer, type TestPod} from '../support/containers.js'
import {cleanupNamespace, labClient, labEnv, onContainerd16, sandboxesIn, uniqueNamespace} from '../support/lab.js'
import {podctl} from '../support/podctl.js'

const client = labClient()
const namespace = uniqueNamespace('runtime-extras')
const env = labEnv()
const asCrictl = labEnv({PODCTL_PERSONALITY: 'crictl'})

/** As crictl: the same words in logrus' fatal line (after crictl's prefix for the command, if any), exit 1. */
function crictlFailure(line: string) {
  const message = line
    .replace(/^Error: /, '')
    .replace(/\n$/, '')
    .replaceAll(/[.*+?^${}()|[\]\\]/g, String.raw`\$&`)
  return {code: 1, stdout: '', stderr: expect.stringMatching(new RegExp(`^time="[^"]+" level=fatal msg="(?:.*: )?${message}"\n$`))}
}

let pod: TestPod
let sleeper: string
let runtimeVersion = ''

beforeAll(async () => {
  await pullBusybox(client)
  pod = await createPod(client, {name: 'extras', namespace})
  sleeper = await runContainer(client, pod, {name: 'sleeper', script: 'sleep 3600'})
  const version = await client.runtime('version', {version: '0.1.0'})
  runtimeVersion = `${version.runtimeName} ${version.runtimeVersion.replace(/^v/, '')}`
})

afterAll(async () => {
  await cleanupNamespace(client, namespace)
  removePodLogs(pod)
  expect(await sandboxesIn(client, namespace)).toEqual([])
  client.close()
})

// containerd 1.6's answer to all three is UNIMPLEMENTED; the lab's other runtimes implement them.
describe.runIf(onContainerd16())('on containerd 1.6: one line, exit 6', () => {
  it('runtime-config names RuntimeConfig, as podctl and as crictl', async () => {
    const need = "the CRI's RuntimeConfig needs containerd 2.0+ or CRI-O 1.28+"
    const line = `Error: ${runtimeVersion} does not implement RuntimeConfig (${need})\n`
    const [own, crictl] = await Promise.all([podctl(['runtime-config'], {env}), podctl(['runtime-config'], {env: asCrictl})])
    expect(own).toMatchObject({code: ExitCode.UNIMPLEMENTED, stdout: '', stderr: line})
    expect(crictl).toMatchObject(crictlFailure(line))
  })

  it('metricsp names ListPodSandboxMetrics, in every format', async () => {
    const need = "the CRI's pod metrics API is newer than containerd 1.x; statsp shows CPU and memory"
    const line = `Error: ${runtimeVersion} does not implement ListPodSandboxMetrics (${need})\n`
    const [table, json, crictl] = await Promise.all([
      podctl(['metricsp'], {env}),
      podctl(['metricsp', '-o', 'json'], {env}),
      podctl(['metricsp', '-o', 'yaml'], {env: asCrictl}),
    ])
    for (const result of [table, json]) expect(result).toMatchObject({code: ExitCode.UNIMPLEMENTED, stdout: '', stderr: line})
    expect(crictl).toMatchObject(crictlFailure(line))
  })

  it('checkpoint names CheckpointContainer once, for a running container by prefix and by POD/CONTAINER', async () => {
    const need = "the CRI's checkpoint API needs containerd 1.7+ or CRI-O 1.25+"
    const line = `Error: ${runtimeVersion} does not implement CheckpointContainer (${need})\n`
    const [byPrefix, byName, crictl] = await Promise.all([
      podctl(['checkpoint', sleeper.slice(0, 12), '-e', '/tmp/podctl-e2e-checkpoint.tar'], {env}),
      podctl(['checkpoint', '-n', namespace, 'extras/sleeper', '--export=/tmp/podctl-e2e-checkpoint.tar'], {env}),
      podctl(['checkpoint', '-e', '/tmp/podctl-e2e-checkpoint.tar', sleeper.slice(0, 12)], {env: asCrictl}),
    ])
    for (const result of [byPrefix, byName]) expect(result).toMatchObject({code: ExitCode.UNIMPLEMENTED, stdout: '', stderr: line})
    expect(crictl).toMatchObject(crictlFailure(line))
  })
})

describe.skipIf(onContainerd16())('on a runtime with RuntimeConfig (containerd 2.x, CRI-O)', () => {
  it("runtime-config says the lab's cgroup driver", async () => {
    const [table, json] = await Promise.all([podctl(['runtime-config'], {env}), podctl(['runtime-config', '-o', 'json'], {env})])
    expect(table).toMatchObject({code: 0, stdout: 'cgroup driver:   CGROUPFS\n', stderr: ''})
    expect(JSON.parse(json.stdout)).toEqual({linux: {cgroupDriver: 'CGROUPFS'}})
  })
})

describe('on any runtime', () => {
  it('checkpoint refuses a missing --export before asking the runtime anything', async () => {
    const result = await podctl(['checkpoint', sleeper.slice(0, 12)], {env})
    expect(result).toMatchObject({
      code: ExitCode.USAGE,
      stdout: '',
      stderr: 'Error: checkpoint needs --export (-e): the tar archive to write the checkpoint to, e.g. --export=/tmp/web.tar\n',
    })
  })
})
