import {randomBytes} from 'node:crypto'

import type {CriClient} from '../../src/lib/cri/client.js'
import {ContainerAnnotation, ContainerLabel, PodctlAnnotation, PodLabel, type RestartPolicy} from '../../src/lib/kube/labels.js'
import {waitForExit} from './containers.js'
import {lab, makeContainerLogDir, runSandbox} from './lab.js'

export {pullBusybox, waitForExit} from './containers.js'

/**
 * Pods built straight through the CRI client with the labels and annotations `podctl run` writes
 * (the feat-lifecycle contract), so kill/status tests do not depend on `run`.
 */
export interface TestContainer {
  name: string
  /** Run with `sh -c`. */
  script: string
  type?: 'init' | 'app'
  /** JSON LifecycleHandler for io.kubernetes.container.preStopHandler. */
  preStop?: unknown
  /** Create only, do not start. */
  createOnly?: boolean
}

export interface TestPodSpec {
  name: string
  namespace: string
  restartPolicy?: RestartPolicy
  terminationGracePeriodSeconds?: number
  labels?: Record<string, string>
  containers: TestContainer[]
}

export interface TestPod {
  sandboxId: string
  uid: string
  containerIds: Record<string, string>
}

/** Where the pod directories of test pods would be: never made, so a kill has none to remove. */
const PODS = '/nonexistent/podctl-test-pods'

export async function createTestPod(client: CriClient, spec: TestPodSpec): Promise<TestPod> {
  const uid = randomBytes(8).toString('hex')
  const {id: sandboxId, config} = await runSandbox(client, {
    name: spec.name,
    namespace: spec.namespace,
    labels: spec.labels,
    uid,
    // What podctl writes on every sandbox it makes: pods built here stand for podctl's (kill --all chooses only those).
    annotations: {[PodctlAnnotation.restartPolicy]: spec.restartPolicy ?? 'Always', [PodctlAnnotation.podDirectory]: `${PODS}/${uid}`},
  })
  const containerIds: Record<string, string> = {}
  for (const container of spec.containers) {
    const type = container.type ?? 'app'
    const annotations: Record<string, string> = {
      [ContainerAnnotation.restartCount]: '0',
      [ContainerAnnotation.terminationMessagePath]: '/dev/termination-log',
      [ContainerAnnotation.terminationMessagePolicy]: 'File',
      [PodctlAnnotation.containerType]: type,
    }
    if (container.preStop !== undefined) annotations[ContainerAnnotation.preStopHandler] = JSON.stringify(container.preStop)
    if (spec.terminationGracePeriodSeconds !== undefined) {
      annotations[ContainerAnnotation.podTerminationGracePeriod] = String(spec.terminationGracePeriodSeconds)
    }

    makeContainerLogDir(config, container.name)
    const {containerId} = await client.runtime(
      'createContainer',
      {
        podSandboxId: sandboxId,
        config: {
          metadata: {name: container.name, attempt: 0},
          image: {image: lab().busybox},
          command: ['sh', '-c', container.script],
          labels: {
            [PodLabel.name]: spec.name,
            [PodLabel.namespace]: spec.namespace,
            [PodLabel.uid]: uid,
            [ContainerLabel.name]: container.name,
          },
          annotations,
          logPath: `${container.name}/0.log`,
          linux: {},
        },
        sandboxConfig: config,
      },
      {timeoutMs: 120_000},
    )
    containerIds[container.name] = containerId
    if (container.createOnly) continue
    await client.runtime('startContainer', {containerId}, {timeoutMs: 120_000})
    if (type === 'init') await waitForExit(client, containerId)
  }

  return {sandboxId, uid, containerIds}
}

/** Sandboxes and containers the runtime still has for a pod uid: both empty once the pod is gone. */
export async function leftovers(client: CriClient, uid: string): Promise<{sandboxes: string[]; containers: string[]}> {
  const selector = {labelSelector: {[PodLabel.uid]: uid}}
  const [{items}, {containers}] = await Promise.all([
    client.runtime('listPodSandbox', {filter: selector}),
    client.runtime('listContainers', {filter: selector}),
  ])
  return {sandboxes: items.map((pod) => pod.id), containers: containers.map((container) => container.id)}
}
