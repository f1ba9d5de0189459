import {describe, expect, it} from 'vitest'

import * as api from '../../../src/generated/runtime/v1/api.js'
import {BufferReader} from '../../../src/lib/cri/buffer-reader.js'
import {responseDecoder} from '../../../src/lib/cri/decoders.js'

type Def = {path: string; requestSerialize: (value: never) => Buffer; responseDeserialize: (value: Buffer) => unknown}
type Message = {encode(message: unknown): {finish(): Uint8Array}; fromPartial(value: unknown): unknown}

const container = {
  id: 'c1',
  podSandboxId: 'p1',
  metadata: {name: 'app', attempt: 2},
  image: {image: 'sha256:abc', annotations: {}, userSpecifiedImage: 'busybox:1.36', runtimeHandler: ''},
  imageRef: 'sha256:abc',
  state: 'CONTAINER_RUNNING',
  createdAt: '1700000000000000000',
  labels: {'io.kubernetes.pod.name': 'web', 'io.kubernetes.container.name': 'app', ünïcode: 'värde ✓ 🚀', empty: ''},
  annotations: {'io.kubernetes.container.hash': 'deadbeef'},
}

describe('BufferReader: responses read from the gRPC Buffer', () => {
  it('decodes every RPC response exactly as the generated deserializer does', () => {
    const services = [api.RuntimeServiceService, api.ImageServiceService] as unknown as Array<Record<string, Def>>
    const withoutType: string[] = []
    for (const service of services) {
      for (const def of Object.values(service)) {
        const rpcName = def.path.slice(def.path.lastIndexOf('/') + 1)
        const type = (api as unknown as Record<string, Message | undefined>)[`${rpcName}Response`]
        if (!type) withoutType.push(rpcName)
        const sample =
          rpcName === 'ListContainers'
            ? {containers: [container, {...container, id: 'c2', labels: {}}]}
            : rpcName === 'ListPodSandbox'
              ? {items: [{id: 'p1', metadata: {name: 'web', namespace: 'shop', uid: 'u', attempt: 0}, labels: container.labels}]}
              : {}
        const bytes = Buffer.from(
          (type ?? {encode: () => ({finish: () => new Uint8Array()})}).encode(type?.fromPartial(sample) ?? {}).finish(),
        )
        expect(responseDecoder(api, rpcName, def)(bytes), rpcName).toEqual(def.responseDeserialize(bytes))
      }
    }

    // Only the event stream's answer is named otherwise; it is read by runtimeStream, not call().
    expect(withoutType).toEqual(['GetContainerEvents'])
  })

  it('turns invalid UTF-8 into U+FFFD as TextDecoder does, and refuses a string past the end', () => {
    // Field 1 (id), length 3: "a", then a lone continuation byte and a truncated sequence.
    const invalid = Buffer.from([0x0a, 0x03, 0x61, 0x80, 0xe2])
    const reader = new BufferReader(invalid)
    reader.tag()
    expect(reader.string()).toBe(new TextDecoder().decode(invalid.subarray(2)))
    const truncated = new BufferReader(Buffer.from([0x0a, 0x05, 0x61]))
    truncated.tag()
    expect(() => truncated.string()).toThrow(RangeError)
  })
})
