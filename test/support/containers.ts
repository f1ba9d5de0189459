import {randomBytes} from 'node:crypto'
import {rmSync} from 'node:fs'

import type {CriClient} from '../../src/lib/cri/client.js'
import {ContainerLabel, PodLabel} from '../../src/lib/kube/labels.js'
import {createSandbox, lab, makeContainerLogDir, sandboxConfig, type SandboxSpec} from './lab.js'

/** A sandbox created for a test, with the config its containers must repeat. */
export interface TestPod {
  id: string
  spec: SandboxSpec & {uid: string}
}

export async function createPod(client: CriClient, spec: SandboxSpec): Promise<TestPod> {
  const full = {...spec, uid: spec.uid ?? randomBytes(8).toString('hex')}
  return {id: await createSandbox(client, full), spec: full}
}

export interface TestContainerSpec {
  name: string
  /** Run as `sh -c SCRIPT` in the lab's busybox. */
  script: string
  attempt?: number
  labels?: Record<string, string>
  /** Create only (state CREATED). */
  noStart?: boolean
}

/**
 * Creates (and starts) a busybox container the way the kubelet does: container and pod labels,
 * log file `<name>/<attempt>.log` under the pod's log directory.
 */
export async function runContainer(client: CriClient, pod: TestPod, spec: TestContainerSpec): Promise<string> {
  const attempt = spec.attempt ?? 0
  const sandbox = sandboxConfig(pod.spec)
  makeContainerLogDir(sandbox, spec.name)
  const {containerId} = await client.runtime('createContainer', {
    podSandboxId: pod.id,
    config: {
      metadata: {name: spec.name, attempt},
      image: {image: lab().busybox},
      command: ['sh', '-c', spec.script],
      logPath: `${spec.name}/${attempt}.log`,
      labels: {
        ...spec.labels,
        [ContainerLabel.name]: spec.name,
        [PodLabel.name]: pod.spec.name,
        [PodLabel.namespace]: pod.spec.namespace,
        [PodLabel.uid]: pod.spec.uid,
      },
      annotations: {},
      linux: {},
    },
    sandboxConfig: sandbox,
  })
  if (!spec.noStart) await client.runtime('startContainer', {containerId})
  return containerId
}

/** Polls ContainerStatus until the container has exited (bounded). */
export async function waitForExit(client: CriClient, containerId: string, timeoutMs = 30_000): Promise<number> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const {status} = await client.runtime('containerStatus', {containerId, verbose: false})
    if (status?.state === 'CONTAINER_EXITED') return status.exitCode
    if (Date.now() > deadline) throw new Error(`container ${containerId} still ${status?.state} after ${timeoutMs}ms`)
    await new Promise((resolve) => {
      setTimeout(resolve, 100)
    })
  }
}

export async function pullBusybox(client: CriClient): Promise<void> {
  await client.image('pullImage', {image: {image: lab().busybox}})
}

/**
 * An ID prefix that matches at least two containers of `pod` (so it stays ambiguous whatever
 * other tests remove meanwhile), creating idle containers there until two IDs share their first
 * character (IDs are random, so this takes a few).
 */
export async function ambiguousPrefix(client: CriClient, pod: TestPod): Promise<string> {
  for (let made = 0; made < 20; made++) {
    const {containers} = await client.runtime('listContainers', {filter: {podSandboxId: pod.id}})
    const seen = new Set<string>()
    for (const {id} of containers) {
      if (seen.has(id[0])) return id[0]
      seen.add(id[0])
    }

    await runContainer(client, pod, {name: `filler-${made}`, script: 'true', noStart: true})
  }

  throw new Error('could not make an ambiguous container ID prefix')
}

/** Removes the pods' log directories (the runtime leaves them behind; the kubelet would delete them). */
export function removePodLogs(...pods: Array<TestPod | undefined>): void {
  for (const pod of pods) if (pod) rmSync(sandboxConfig(pod.spec).logDirectory as string, {recursive: true, force: true})
}
