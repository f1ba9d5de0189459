import {describe, expect, it} from 'vitest'

import type {Container, PodSandbox} from '../../../src/generated/runtime/v1/api.js'
import {goneDebugContainers, goneDebugPods} from '../../../src/lib/debug/reap.js'
import {DEBUG_LABEL, debugMarks} from '../../../src/lib/debug/marks.js'

/** Judged from this boot: a session of another boot is gone whatever its pid. */
const vantage = {bootId: 'this-boot', pidNamespace: 'pid:[1]'}
const goneSession = {'io.podctl.session.pid': '4242', 'io.podctl.session.start': '17', 'io.podctl.session.boot': 'an-earlier-boot'}
const liveSession = {'io.podctl.session.pid': String(process.pid)}

/** What podctl writes on every container it makes. */
const podctlContainer = {'io.podctl.containerType': 'app'}

function container(id: string, labels: Record<string, string>, annotations: Record<string, string> = podctlContainer): Container {
  return {
    id,
    podSandboxId: 's1',
    metadata: {name: id, attempt: 0},
    state: 'CONTAINER_RUNNING',
    labels: {'io.kubernetes.pod.uid': 'u1', 'io.kubernetes.container.name': id, ...labels},
    annotations,
  } as unknown as Container
}

function sandbox(id: string, name: string, labels: Record<string, string>, podctl = true): PodSandbox {
  const annotations = podctl ? {'io.podctl.restartPolicy': 'Never', 'io.podctl.podDirectory': `/var/lib/podctl/pods/${id}-uid`} : {}
  return {
    id,
    metadata: {name, namespace: 'default', uid: `${id}-uid`, attempt: 0},
    state: 'SANDBOX_READY',
    labels,
    annotations,
  } as unknown as PodSandbox
}

describe('what a gone debug session left', () => {
  it('takes only podctl debug containers whose session is gone', () => {
    const containers = [
      container('gone', {[DEBUG_LABEL]: 'container', ...goneSession}),
      container('live', {[DEBUG_LABEL]: 'container', ...liveSession}),
      container('kept', {[DEBUG_LABEL]: 'container'}),
      container('not-debug', goneSession),
      container('not-podctl', {[DEBUG_LABEL]: 'container', ...goneSession}, {}),
      container('a-node-pod-label', {[DEBUG_LABEL]: 'node', ...goneSession}),
    ]
    expect(goneDebugContainers(containers, vantage).map((c) => c.id)).toEqual(['gone'])
  })

  it('takes only podctl debug pods whose session is gone, by pod', () => {
    const sandboxes = [
      sandbox('s1', 'node-debugger-a', {[DEBUG_LABEL]: 'node', ...goneSession}),
      sandbox('s2', 'node-debugger-b', {[DEBUG_LABEL]: 'node', ...liveSession}),
      sandbox('s3', 'node-debugger-c', {[DEBUG_LABEL]: 'node', ...goneSession}, false),
      sandbox('s4', 'web', goneSession),
    ]
    expect([...goneDebugPods(sandboxes, vantage).keys()]).toEqual(['node-debugger-a_default'])
  })

  it('marks a --keep container with no session, and a session one with this process', () => {
    expect(debugMarks('container', 'podctl debug web', {session: false})).toEqual({labels: {[DEBUG_LABEL]: 'container'}, annotations: {}})
    const marks = debugMarks('node', 'podctl debug node')
    expect(marks.labels).toMatchObject({[DEBUG_LABEL]: 'node', 'io.podctl.session.pid': String(process.pid)})
    expect(marks.annotations).toEqual({'io.podctl.session.description': 'podctl debug node'})
  })
})
