import {BinaryReader, WireType} from '@bufbuild/protobuf/wire'

/** How many items a List answer holds, by the state each reports (its enum name). */
export interface StateCounts {
  total: number
  byState: Map<string, number>
}

/**
 * Counts the items of a List answer (repeated field 1: ListPodSandbox's items, ListContainers'
 * containers, ListImages' images) by the enum at `stateField` inside each item, reading nothing
 * else: a summary of 100 pods needs neither their labels nor their annotations, which are most of
 * the bytes. An item without the field has the enum's zero value, as proto3 encodes it.
 * Without a state field, only the total is counted.
 */
export function countStates(buffer: Uint8Array, stateName?: {field: number; name: (value: number) => string}): StateCounts {
  const reader = new BinaryReader(buffer)
  const counts: StateCounts = {total: 0, byState: new Map()}
  while (reader.pos < reader.len) {
    const tag = reader.uint32()
    if (tag >>> 3 !== 1 || (tag & 7) !== WireType.LengthDelimited) {
      reader.skip(tag & 7, tag >>> 3)
      continue
    }

    const end = reader.uint32() + reader.pos
    let state = 0
    while (reader.pos < end) {
      const field = reader.uint32()
      if (stateName && field >>> 3 === stateName.field && (field & 7) === WireType.Varint) state = reader.int32()
      else reader.skip(field & 7, field >>> 3)
    }

    counts.total++
    if (stateName) {
      const name = stateName.name(state)
      counts.byState.set(name, (counts.byState.get(name) ?? 0) + 1)
    }
  }

  return counts
}
