import {describe, expect, it} from 'vitest'

import {
  containerStateFromJSON,
  ListContainersResponse,
  ListImagesResponse,
  ListPodSandboxResponse,
  podSandboxStateFromJSON,
} from '../../../src/generated/runtime/v1/api.js'
import {countStates} from '../../../src/lib/cri/count-states.js'

const labels = {'io.kubernetes.pod.name': 'web', ünïcode: 'värde ✓'}

function tally(states: string[]): Map<string, number> {
  const byState = new Map<string, number>()
  for (const state of states) byState.set(state, (byState.get(state) ?? 0) + 1)
  return byState
}

describe('countStates: a List answer counted without decoding it', () => {
  it('counts containers by state, the zero value (CREATED) included, as decoding them would', () => {
    const states = ['CONTAINER_RUNNING', 'CONTAINER_EXITED', 'CONTAINER_CREATED', 'CONTAINER_RUNNING', 'CONTAINER_UNKNOWN']
    const message = ListContainersResponse.fromPartial({
      containers: states.map((state, i) => ({id: `c${i}`, podSandboxId: 'p', state: state as never, labels, annotations: labels})),
    })
    const bytes = ListContainersResponse.encode(message).finish()
    const decoded = ListContainersResponse.decode(bytes).containers.map((container) => container.state)
    const counts = countStates(bytes, {field: 6, name: containerStateFromJSON})
    expect(counts.total).toBe(5)
    expect(counts.byState).toEqual(tally(decoded))
    expect(counts.byState.get('CONTAINER_RUNNING')).toBe(2)
  })

  it('counts sandboxes by state, and an unknown enum value as UNRECOGNIZED', () => {
    const message = ListPodSandboxResponse.fromPartial({
      items: [
        {id: 'a', state: 'SANDBOX_READY' as never, labels},
        {id: 'b', state: 'SANDBOX_NOTREADY' as never},
        {id: 'c', metadata: {name: 'x', namespace: 'y', uid: 'z', attempt: 3}},
      ],
    })
    const bytes = ListPodSandboxResponse.encode(message).finish()
    const counts = countStates(bytes, {field: 3, name: podSandboxStateFromJSON})
    expect(counts).toEqual({
      total: 3,
      byState: new Map([
        ['SANDBOX_NOTREADY', 1],
        ['SANDBOX_READY', 2],
      ]),
    })
    // Field 1, length 2: field 3 (varint) = 7, a state this client does not know.
    expect(countStates(Uint8Array.from([0x0a, 0x02, 0x18, 0x07]), {field: 3, name: podSandboxStateFromJSON}).byState).toEqual(
      new Map([['UNRECOGNIZED', 1]]),
    )
  })

  it('counts images, and nothing in an empty answer', () => {
    const bytes = ListImagesResponse.encode(
      ListImagesResponse.fromPartial({images: [{id: 'sha256:1', repoTags: ['a:1']}, {id: 'sha256:2'}, {id: 'sha256:3', size: '123'}]}),
    ).finish()
    expect(countStates(bytes).total).toBe(3)
    expect(countStates(new Uint8Array()).total).toBe(0)
  })
})
