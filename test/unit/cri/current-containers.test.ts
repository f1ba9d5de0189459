/**
 * The `pods` table's CONTAINERS cell counts a pod's current containers as kubectl's READY does: the
 * newest attempt of each container, init containers left out, sidecars in; "running" stands for
 * ready (a listing runs no readiness probe). Read from ListContainers' bytes through the decoder
 * `pods` uses (client.countContainersBySandbox), checked against answers built with the generated code.
 */
import {describe, expect, it} from 'vitest'

import * as api from '../../../src/generated/runtime/v1/api.js'
import {runningBySandboxCounter} from '../../../src/lib/cri/decoders.js'
import {PodctlAnnotation} from '../../../src/lib/kube/labels.js'

const POD = 'p'.repeat(64)
const OTHER_POD = 'q'.repeat(64)
// The keys `pods` passes (node/pods.ts): podctl's annotations of kube/labels.ts.
const count = runningBySandboxCounter(api, {type: PodctlAnnotation.containerType, init: 'init', sidecar: PodctlAnnotation.sidecar})

interface Made {
  name: string
  attempt?: number
  state: 'CONTAINER_CREATED' | 'CONTAINER_EXITED' | 'CONTAINER_RUNNING' | 'CONTAINER_UNKNOWN'
  type?: 'app' | 'init'
  sidecar?: boolean
  pod?: string
  createdAt?: number
}

/** A container as `run` makes it: the kubelet's labels and annotations, and podctl's type (and sidecar index). */
function container(made: Made, index: number): api.Container {
  const annotations: Record<string, string> = {
    'io.kubernetes.container.hash': 'abcd1234',
    'io.kubernetes.container.restartCount': String(made.attempt ?? 0),
    'io.kubernetes.container.terminationMessagePath': '/dev/termination-log',
  }
  if (made.type) annotations['io.podctl.containerType'] = made.type
  if (made.sidecar) annotations['io.podctl.sidecar'] = '0'
  return api.Container.fromPartial({
    id: `c${index}`.padEnd(64, '0'),
    podSandboxId: made.pod ?? POD,
    metadata: {name: made.name, attempt: made.attempt ?? 0},
    state: made.state as never,
    createdAt: String(made.createdAt ?? 1_700_000_000_000_000_000 + index),
    labels: {'io.kubernetes.pod.name': 'web', 'io.kubernetes.container.name': made.name},
    annotations,
  })
}

function counted(containers: Made[]): Map<string, {total: number; matching: number}> {
  const message = api.ListContainersResponse.fromPartial({containers: containers.map((made, i) => container(made, i))})
  return count(Buffer.from(api.ListContainersResponse.encode(message).finish()))
}

describe("pods' CONTAINERS: a pod's current containers, as kubectl's READY counts them", () => {
  it('a healthy pod with a finished init container and a restarted container is 2/2, not 2/4', () => {
    const groups = counted([
      {name: 'setup', type: 'init', state: 'CONTAINER_EXITED'},
      {name: 'web', type: 'app', attempt: 0, state: 'CONTAINER_EXITED'},
      {name: 'web', type: 'app', attempt: 1, state: 'CONTAINER_RUNNING'},
      {name: 'log', type: 'app', state: 'CONTAINER_RUNNING'},
    ])
    expect(groups.get(POD)).toEqual({total: 2, matching: 2})
  })

  it("counts a crashed container's newest attempt, whatever order the runtime lists them in", () => {
    const groups = counted([
      {name: 'web', type: 'app', attempt: 2, state: 'CONTAINER_EXITED'},
      {name: 'web', type: 'app', attempt: 0, state: 'CONTAINER_EXITED'},
      {name: 'web', type: 'app', attempt: 1, state: 'CONTAINER_EXITED'},
      {name: 'log', type: 'app', state: 'CONTAINER_RUNNING'},
    ])
    expect(groups.get(POD)).toEqual({total: 2, matching: 1})
  })

  it('counts sidecars (restartable init containers) as kubectl does, and not a running init container', () => {
    const groups = counted([
      {name: 'proxy', type: 'init', sidecar: true, state: 'CONTAINER_RUNNING'},
      {name: 'agent', type: 'init', sidecar: true, state: 'CONTAINER_EXITED'},
      {name: 'migrate', type: 'init', state: 'CONTAINER_RUNNING', pod: OTHER_POD},
      {name: 'web', type: 'app', state: 'CONTAINER_RUNNING'},
    ])
    expect(groups.get(POD)).toEqual({total: 3, matching: 2})
    // A pod still initializing: its app containers do not exist yet, and the init container is not one of them.
    expect(groups.get(OTHER_POD)).toBeUndefined()
  })

  it('counts containers podctl did not make (no type annotation) as app containers, per sandbox', () => {
    const groups = counted([
      {name: 'shell', state: 'CONTAINER_RUNNING'},
      {name: 'shell', state: 'CONTAINER_CREATED', pod: OTHER_POD},
      {name: 'job', state: 'CONTAINER_EXITED', pod: OTHER_POD},
    ])
    expect(groups.get(POD)).toEqual({total: 1, matching: 1})
    expect(groups.get(OTHER_POD)).toEqual({total: 2, matching: 0})
  })

  it('breaks a tie of attempts by creation time, the later one current', () => {
    const groups = counted([
      {name: 'web', state: 'CONTAINER_RUNNING', createdAt: 2000},
      {name: 'web', state: 'CONTAINER_EXITED', createdAt: 1000},
      {name: 'log', state: 'CONTAINER_EXITED', createdAt: 3000, pod: OTHER_POD},
      {name: 'log', state: 'CONTAINER_RUNNING', createdAt: 4000, pod: OTHER_POD},
    ])
    expect(groups.get(POD)).toEqual({total: 1, matching: 1})
    expect(groups.get(OTHER_POD)).toEqual({total: 1, matching: 1})
  })

  it('reads the type annotation by its whole key and value', () => {
    const message = api.ListContainersResponse.fromPartial({
      containers: [
        {podSandboxId: POD, metadata: {name: 'a'}, state: 'CONTAINER_RUNNING' as never, annotations: {'io.podctl.containerTypo': 'init'}},
        {podSandboxId: POD, metadata: {name: 'b'}, state: 'CONTAINER_RUNNING' as never, annotations: {'io.podctl.containerType': 'initx'}},
        {podSandboxId: POD, metadata: {name: 'c'}, state: 'CONTAINER_EXITED' as never, annotations: {'io.podctl.containerType': 'init'}},
      ],
    })
    expect(count(Buffer.from(api.ListContainersResponse.encode(message).finish())).get(POD)).toEqual({total: 2, matching: 2})
  })
})
