import {WireType} from '@bufbuild/protobuf/wire'

import {BufferReader} from './buffer-reader.js'

/** How many items a List answer holds, by the state each reports (its enum name). */
export interface StateCounts {
  total: number
  byState: Map<string, number>
}

/** Where an item's state is (its field number) and the name of each value. */
export interface StateField {
  field: number
  name: (value: number) => string
}

/**
 * Counts the items of a List answer (repeated field 1: ListPodSandbox's items, ListContainers'
 * containers, ListImages' images) by the enum at `state` inside each item, reading nothing else: a
 * summary of 100 pods needs neither their labels nor their annotations, which are most of the
 * bytes. An item without the field has the enum's zero value, as proto3 encodes it. Without a
 * state field, only the total is counted.
 */
export function countStates(buffer: Uint8Array, state?: StateField): StateCounts {
  const counts: StateCounts = {total: 0, byState: new Map()}
  readItems(buffer, state, (value) => add(counts, state, value))
  return counts
}

function add(counts: StateCounts, state: StateField | undefined, value: number): void {
  counts.total++
  if (!state) return
  const name = state.name(value)
  counts.byState.set(name, (counts.byState.get(name) ?? 0) + 1)
}

/** Visits each item of repeated field 1 with its state (0 when absent). */
function readItems(buffer: Uint8Array, state: {field: number} | undefined, visit: (state: number) => void): void {
  const reader = new BufferReader(Buffer.isBuffer(buffer) ? buffer : Buffer.from(buffer.buffer, buffer.byteOffset, buffer.byteLength))
  while (reader.pos < reader.len) {
    const tag = reader.uint32()
    if (tag >>> 3 !== 1 || (tag & 7) !== WireType.LengthDelimited) {
      reader.skipField(tag)
      continue
    }

    const end = reader.fieldEnd()
    let value = 0
    // Once the state was read, the item's rest (a container's labels and annotations, most of its
    // bytes) is stepped over whole: only a repeat of the field, which no runtime's encoder writes, could change it.
    let needState = state !== undefined
    while (reader.pos < end && needState) {
      const field = reader.uint32()
      if (state && field >>> 3 === state.field && (field & 7) === WireType.Varint) {
        value = reader.int32()
        needState = false
      } else reader.skipField(field)
    }

    reader.pos = end
    visit(value)
  }
}
