import {BufferReader, type SlicingBuffer} from './buffer-reader.js'
import {after, skip, varint} from './wire-scan.js'

/** A pod's count: its current containers, and how many of them run. */
export interface GroupCount {
  total: number
  matching: number
}

/**
 * The annotations that say what kind a container is: podctl writes io.podctl.containerType (init|app)
 * and io.podctl.sidecar (kube/labels.ts, which cri may not import: the caller passes them).
 */
export interface ContainerKindKeys {
  type: string
  init: string
  sidecar: string
}

/**
 * The `pods` table's CONTAINERS cell, counted as kubectl's READY column counts a pod (printPod in
 * kubectl's printers): the pod's containers, not every container the runtime still holds for it.
 * - Only the newest attempt of each container name counts: a restarted container's exited attempts
 *   are history, as the kubelet keeps one status per container.
 * - Init containers are not counted once they ran; sidecars (init containers with restartPolicy
 *   Always, io.podctl.sidecar) count as app containers, as kubectl adds restartable init containers.
 * - "matching" is how many of those are running. kubectl needs Ready, which its readiness probe
 *   decides; a one-shot listing runs no probe, so a running container stands for a ready one, as
 *   kubectl shows a running container without a readiness probe.
 * Counted per sandbox (a row of `pods` is one sandbox), from ListContainers' bytes: the sandbox id,
 * metadata's name and attempt, state, created_at and two annotation keys are read; the rest
 * (labels, other annotations' values, images) is stepped over.
 */
export function countCurrentContainers(buffer: Uint8Array, runningState: number, keys: ContainerKindKeys): Map<string, GroupCount> {
  const bytes = (Buffer.isBuffer(buffer) ? buffer : Buffer.from(buffer.buffer, buffer.byteOffset, buffer.byteLength)) as SlicingBuffer
  const table = newTable(bytes, countItems(bytes), runningState, keys)
  // Each sandbox's current containers, as a list through table.next from its first one.
  const firsts = new Map<string, number>()
  const {length} = bytes
  let pos = 0
  let index = 0
  while (pos < length) {
    const tag = varint(bytes, pos)
    pos = after
    if (tag !== 10) {
      pos = skip(bytes, tag, pos, length)
      continue
    }

    const to = varint(bytes, pos) + after
    if (!(to <= length)) throw new RangeError('premature EOF')
    const counted = readContainer(table, index, after, to)
    pos = to
    if (counted) keepNewest(firsts, bytes.utf8Slice(sandboxStart, sandboxEnd), table, index)
    index++
  }

  const groups = new Map<string, GroupCount>()
  for (const [sandbox, first] of firsts) {
    const counts = {total: 0, matching: 0}
    for (let i = first; i >= 0; i = table.next[i]) {
      counts.total++
      counts.matching += table.running[i]
    }

    groups.set(sandbox, counts)
  }

  return groups
}

/**
 * The containers as columns (no object per container: a one-shot listing of 10 000 spends more in
 * the garbage collector than in reading): where each name and created_at lie in the message, the
 * attempt, whether it runs, and the next current container of its sandbox (-1 for none).
 */
interface Table {
  bytes: Buffer
  /** The state enum's number for CONTAINER_RUNNING. */
  runningState: number
  /** The kind's annotation keys and init value, as bytes. */
  typeKey: Buffer
  sidecarKey: Buffer
  initValue: Buffer
  nameStart: Int32Array
  nameEnd: Int32Array
  attempt: Uint32Array
  /** Where created_at's varint starts (-1 when absent): read only to break a tie of attempts. */
  createdAt: Int32Array
  running: Uint8Array
  next: Int32Array
}

function newTable(bytes: Buffer, capacity: number, runningState: number, keys: ContainerKindKeys): Table {
  return {
    bytes,
    runningState,
    typeKey: Buffer.from(keys.type),
    sidecarKey: Buffer.from(keys.sidecar),
    initValue: Buffer.from(keys.init),
    nameStart: new Int32Array(capacity),
    nameEnd: new Int32Array(capacity),
    attempt: new Uint32Array(capacity),
    createdAt: new Int32Array(capacity),
    running: new Uint8Array(capacity),
    next: new Int32Array(capacity),
  }
}

/** How many containers the message holds (its top-level field 1), to size the table. */
function countItems(bytes: Buffer): number {
  let count = 0
  let pos = 0
  while (pos < bytes.length) {
    const tag = varint(bytes, pos)
    if (tag === 10) count++
    pos = skip(bytes, tag, after, bytes.length)
  }

  return count
}

/** Puts container i in its sandbox's list, unless an attempt of its name there is newer (names compared as bytes). */
function keepNewest(firsts: Map<string, number>, sandbox: string, table: Table, i: number): void {
  table.next[i] = -1
  const first = firsts.get(sandbox)
  if (first === undefined) {
    firsts.set(sandbox, i)
    return
  }

  let previous = -1
  for (let seen = first; seen >= 0; previous = seen, seen = table.next[seen]) {
    if (!sameName(table, seen, i)) continue
    if (!isNewer(table, i, seen)) return
    table.next[i] = table.next[seen]
    if (previous < 0) firsts.set(sandbox, i)
    else table.next[previous] = i
    return
  }

  table.next[previous] = i
}

// Container's fields (CRI v1) as tags.
const SANDBOX_ID_TAG = (2 << 3) | 2
const METADATA_TAG = (3 << 3) | 2
const STATE_TAG = 6 << 3
const CREATED_AT_TAG = 7 << 3
const ANNOTATION_TAG = (9 << 3) | 2

/** Where the container just read names its sandbox (set by readContainer, for the caller: no object per container). */
let sandboxStart = 0
let sandboxEnd = 0

/** Container i's fields the count needs, from bytes [pos, to), into the table; false for an init container that is no sidecar. */
function readContainer(table: Table, i: number, pos: number, to: number): boolean {
  const {bytes, runningState} = table
  sandboxStart = 0
  sandboxEnd = 0
  table.createdAt[i] = -1
  table.running[i] = runningState === 0 ? 1 : 0
  let init = false
  let sidecar = false
  while (pos < to) {
    // One-byte tags and lengths (nearly all) are read inline: this loop runs cold, mostly interpreted.
    let tag = bytes[pos++]
    if (tag > 0x7f) {
      tag = varint(bytes, pos - 1)
      pos = after
    }

    if (tag === STATE_TAG) {
      table.running[i] = varint(bytes, pos) === runningState ? 1 : 0
      pos = after
      continue
    }

    if (tag === CREATED_AT_TAG) table.createdAt[i] = pos
    if ((tag & 7) !== 2) {
      pos = skip(bytes, tag, pos, to)
      continue
    }

    let size = bytes[pos++]
    if (size > 0x7f) {
      size = varint(bytes, pos - 1)
      pos = after
    }

    const end = pos + size
    if (!(end <= to)) throw new RangeError('premature EOF')
    if (tag === SANDBOX_ID_TAG) {
      sandboxStart = pos
      sandboxEnd = end
    } else if (tag === METADATA_TAG) readMetadata(table, i, pos, end)
    else if (tag === ANNOTATION_TAG && isWantedKeyLength(table, bytes[pos + 1])) {
      const key = annotationKey(table, pos, end)
      if (key === table.typeKey) init = entryValueIs(bytes, keyEnd, end, table.initValue)
      else if (key === table.sidecarKey) sidecar = true
    }

    pos = end
  }

  if (pos !== to) throw new RangeError('premature EOF')
  return !init || sidecar
}

/** Most annotation keys differ from both wanted ones in length: an entry's one-byte key length decides without more reading. */
function isWantedKeyLength(table: Table, length: number): boolean {
  return length === table.typeKey.length || length === table.sidecarKey.length
}

/** ContainerMetadata: name = 1, attempt = 2. */
function readMetadata(table: Table, i: number, pos: number, to: number): void {
  const {bytes} = table
  table.nameStart[i] = 0
  table.nameEnd[i] = 0
  table.attempt[i] = 0
  while (pos < to) {
    const tag = varint(bytes, pos)
    pos = after
    if (tag === 10) {
      table.nameEnd[i] = varint(bytes, pos) + after
      table.nameStart[i] = after
      pos = table.nameEnd[i]
    } else if (tag === 16) {
      table.attempt[i] = varint(bytes, pos)
      pos = after
    } else pos = skip(bytes, tag, pos, to)
  }
}

/** Where the annotation key just read ends (set by annotationKey, for the caller: no object per entry). */
let keyEnd = 0

/**
 * Which of the two wanted keys an annotations entry [pos, to) has (its key is field 1, first, as
 * every encoder writes a map entry), leaving `keyEnd` past the key; undefined for any other key.
 */
function annotationKey(table: Table, pos: number, to: number): Buffer | undefined {
  const {bytes} = table
  if (bytes[pos] !== 10) return undefined
  const end = varint(bytes, pos + 1) + after
  if (!(end <= to)) throw new RangeError('premature EOF')
  const start = after
  keyEnd = end
  if (sameBytes(bytes, start, end, table.typeKey)) return table.typeKey
  return sameBytes(bytes, start, end, table.sidecarKey) ? table.sidecarKey : undefined
}

/** Whether the entry's value (field 2, from pos) is exactly these bytes. */
function entryValueIs(bytes: Buffer, pos: number, to: number, value: Buffer): boolean {
  if (bytes[pos] !== 18) return false
  const end = varint(bytes, pos + 1) + after
  return end <= to && sameBytes(bytes, after, end, value)
}

function sameBytes(bytes: Buffer, start: number, end: number, wanted: Buffer): boolean {
  if (end - start !== wanted.length) return false
  for (let i = 0; i < wanted.length; i++) if (bytes[start + i] !== wanted[i]) return false
  return true
}

function sameName(table: Table, one: number, other: number): boolean {
  const {bytes, nameStart, nameEnd} = table
  const length = nameEnd[one] - nameStart[one]
  if (nameEnd[other] - nameStart[other] !== length) return false
  for (let k = 0; k < length; k++) if (bytes[nameStart[one] + k] !== bytes[nameStart[other] + k]) return false
  return true
}

/** A later attempt, or (a tie the kubelet never makes) the one created later. */
function isNewer(table: Table, candidate: number, seen: number): boolean {
  const {attempt} = table
  if (attempt[candidate] !== attempt[seen]) return attempt[candidate] > attempt[seen]
  return createdAt(table, candidate) > createdAt(table, seen)
}

function createdAt(table: Table, i: number): bigint {
  const at = table.createdAt[i]
  return at < 0 ? 0n : BigInt(new BufferReader(table.bytes.subarray(at)).int64())
}
