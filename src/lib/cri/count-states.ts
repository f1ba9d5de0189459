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
  readItems(buffer, state, undefined, (value) => add(counts, state, value))
  return counts
}

/** How many items share a group field's value, and how many of those hold one state. */
export interface GroupCount {
  total: number
  matching: number
}

/**
 * Items counted per value of a string field (ListContainers' pod_sandbox_id = 2), and per group those
 * whose state is `state.value`: what `pods` shows (running/total) for thousands of sandboxes, with
 * one small object per group rather than a map of state names each.
 */
export function countGroups(buffer: Uint8Array, groupField: number, state: {field: number; value: number}): Map<string, GroupCount> {
  const groups = new Map<string, GroupCount>()
  readItems(buffer, state, groupField, (value, group) => {
    let counts = groups.get(group)
    if (!counts) groups.set(group, (counts = {total: 0, matching: 0}))
    counts.total++
    if (value === state.value) counts.matching++
  })
  return groups
}

function add(counts: StateCounts, state: StateField | undefined, value: number): void {
  counts.total++
  if (!state) return
  const name = state.name(value)
  counts.byState.set(name, (counts.byState.get(name) ?? 0) + 1)
}

/** Visits each item of repeated field 1 with its state (0 when absent) and its group field ('' when absent). */
function readItems(
  buffer: Uint8Array,
  state: {field: number} | undefined,
  groupField: number | undefined,
  visit: (state: number, group: string) => void,
): void {
  const reader = new BufferReader(Buffer.isBuffer(buffer) ? buffer : Buffer.from(buffer.buffer, buffer.byteOffset, buffer.byteLength))
  while (reader.pos < reader.len) {
    const tag = reader.uint32()
    if (tag >>> 3 !== 1 || (tag & 7) !== WireType.LengthDelimited) {
      reader.skipField(tag)
      continue
    }

    const end = reader.fieldEnd()
    let value = 0
    let group = ''
    // Once both fields were read, the item's rest (a container's labels and annotations, most of its
    // bytes) is stepped over whole: only a repeat of a field, which no runtime's encoder writes, could change them.
    let needState = state !== undefined
    let needGroup = groupField !== undefined
    while (reader.pos < end && (needState || needGroup)) {
      const field = reader.uint32()
      const number = field >>> 3
      const wire = field & 7
      if (state && number === state.field && wire === WireType.Varint) {
        value = reader.int32()
        needState = false
      } else if (number === groupField && wire === WireType.LengthDelimited) {
        group = reader.string()
        needGroup = false
      } else reader.skipField(field)
    }

    reader.pos = end
    visit(value, group)
  }
}
