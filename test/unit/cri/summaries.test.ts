import {describe, expect, it} from 'vitest'

import {
  containerStateFromJSON,
  ListContainersResponse,
  ListPodSandboxResponse,
  podSandboxStateFromJSON,
} from '../../../src/generated/runtime/v1/api.js'
import {decodeContainerSummaries, decodeSandboxSummaries} from '../../../src/lib/cri/summaries.js'

const names = {sandbox: podSandboxStateFromJSON, container: containerStateFromJSON}
const labels = {'io.kubernetes.pod.name': 'web', 'io.kubernetes.pod.namespace': 'shop', ünïcode: 'värde ✓', empty: ''}
const annotations = {'kubernetes.io/config.source': 'api', 'io.kubernetes.container.hash': 'a1b2c3'}

/** A field number no CRI v1 message uses, as a newer runtime could send: every wire type, to be stepped over. */
function withUnknownFields(bytes: Uint8Array): Buffer {
  // field 15: varint 300, fixed64, length-delimited "xyz", fixed32
  const unknown = [0x78, 0xac, 0x02, 0x79, 1, 2, 3, 4, 5, 6, 7, 8, 0x7a, 3, 0x78, 0x79, 0x7a, 0x7d, 1, 2, 3, 4]
  return Buffer.from([...unknown, ...bytes])
}

describe('summaries: List answers decoded for a table', () => {
  it('decodes sandboxes as the generated code does, with labels and annotations left empty', () => {
    const message = ListPodSandboxResponse.fromPartial({
      items: [
        {
          id: 'a'.repeat(64),
          metadata: {name: 'wéb-0', uid: 'u-1', namespace: 'shop', attempt: 3},
          state: 'SANDBOX_NOTREADY' as never,
          createdAt: '1764590400123456789',
          labels,
          annotations,
          runtimeHandler: 'runc',
        },
        {id: 'b', labels},
        {id: 'c', state: 7 as never, createdAt: '-5'},
      ],
    })
    const bytes = Buffer.from(ListPodSandboxResponse.encode(message).finish())
    const full = ListPodSandboxResponse.decode(bytes)
    const expected = full.items.map((pod) => ({...pod, labels: {}, annotations: {}}))
    expect(decodeSandboxSummaries(bytes, names)).toEqual({items: expected})
    expect(decodeSandboxSummaries(withUnknownFields(bytes), names)).toEqual({items: expected})
    expect(expected[2].state).toBe('UNRECOGNIZED')
  })

  it('decodes containers as the generated code does, with labels kept and annotations (theirs and the image spec’s) left empty', () => {
    const message = ListContainersResponse.fromPartial({
      containers: [
        {
          id: 'c1',
          podSandboxId: 'p1',
          metadata: {name: 'app', attempt: 2},
          image: {
            image: 'sha256:' + 'f'.repeat(64),
            annotations,
            userSpecifiedImage: 'busybox:1.36',
            runtimeHandler: 'kata',
            imageRef: 'sha256:' + 'e'.repeat(64),
          },
          imageRef: 'sha256:' + 'e'.repeat(64),
          state: 'CONTAINER_RUNNING' as never,
          createdAt: '1764590400000000001',
          labels,
          annotations,
          imageId: 'sha256:' + 'd'.repeat(64),
        },
        {id: 'c2', state: 'CONTAINER_EXITED' as never},
        {id: 'c3'},
      ],
    })
    const bytes = Buffer.from(ListContainersResponse.encode(message).finish())
    const full = ListContainersResponse.decode(bytes)
    const expected = full.containers.map((container) => ({
      ...container,
      annotations: {},
      image: container.image && {...container.image, annotations: {}},
    }))
    expect(decodeContainerSummaries(bytes, names)).toEqual({containers: expected})
    expect(decodeContainerSummaries(withUnknownFields(bytes), names)).toEqual({containers: expected})
    expect(expected[0].labels).toEqual(labels)
    expect(expected[2].state).toBe('CONTAINER_CREATED')
  })

  it('fails on a truncated answer, as the generated code does', () => {
    const bytes = Buffer.from(ListPodSandboxResponse.encode(ListPodSandboxResponse.fromPartial({items: [{id: 'abcdef'}]})).finish())
    expect(() => decodeSandboxSummaries(bytes.subarray(0, -2), names)).toThrow(RangeError)
  })
})
