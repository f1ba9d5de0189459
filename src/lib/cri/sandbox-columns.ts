/**
 * ListPodSandbox's answer read into columns for `pods`'s table, as container-columns.ts reads
 * ListContainers: where each sandbox's ID, name and namespace lie in the message, and its numbers,
 * in typed arrays; labels and annotations (most of the bytes) stepped over.
 */
import type {SlicingBuffer} from './buffer-reader.js'
import {Wire} from './wire.js'

export const SandboxSpan = {id: 0, name: 1, namespace: 2} as const
const SPANS = 3

export interface SandboxColumns {
  bytes: Buffer
  count: number
  /** Sandbox i's span s: bytes [starts[i * 3 + s], ends[i * 3 + s]); start -1 when the message lacks the field. */
  starts: Int32Array
  ends: Int32Array
  /** The state enum's number and metadata.attempt. */
  states: Int32Array
  attempts: Uint32Array
  /** created_at, an int64, as its high (signed) and low (unsigned) 32 bits. */
  createdHigh: Int32Array
  createdLow: Uint32Array
}

/** Reads ListPodSandboxResponse (repeated PodSandbox items = 1) into columns. Throws RangeError on a malformed message. */
export function readSandboxColumns(bytes: Buffer): SandboxColumns {
  let columns = allocate(bytes, Math.max(16, Math.ceil(bytes.length / 192)))
  const wire = new Wire(bytes)
  while (wire.pos < bytes.length) {
    const tag = wire.varint()
    if (tag !== 10) {
      wire.skip(tag)
      continue
    }

    if (columns.count === columns.states.length) columns = grow(columns)
    sandbox(wire, wire.end(), columns, columns.count++)
  }

  return columns
}

/** The string of sandbox i's span s ('' when absent), as every decoder reads it. */
export function sandboxText(columns: SandboxColumns, i: number, span: number): string {
  const start = columns.starts[i * SPANS + span]
  return start < 0 ? '' : (columns.bytes as SlicingBuffer).utf8Slice(start, columns.ends[i * SPANS + span])
}

/** The offset of sandbox i's span s in starts/ends. */
export function sandboxSpanIndex(i: number, span: number): number {
  return i * SPANS + span
}

function sandbox(wire: Wire, to: number, columns: SandboxColumns, i: number): void {
  while (wire.pos < to) {
    const tag = wire.varint()
    switch (tag) {
      case 10: {
        span(wire, columns, i * SPANS + SandboxSpan.id)
        break
      }

      case 18: {
        metadata(wire, wire.end(), columns, i)
        break
      }

      case 24: {
        // An Int32Array keeps the varint's low 32 bits as int32, as int32 fields are read.
        columns.states[i] = wire.varint()
        break
      }

      case 32: {
        columns.createdLow[i] = wire.varint()
        columns.createdHigh[i] = wire.high
        break
      }

      default:
        wire.skip(tag)
    }
  }

  if (wire.pos !== to) throw new RangeError('premature EOF')
}

function metadata(wire: Wire, to: number, columns: SandboxColumns, i: number): void {
  while (wire.pos < to) {
    const tag = wire.varint()
    switch (tag) {
      case 10: {
        span(wire, columns, i * SPANS + SandboxSpan.name)
        break
      }

      case 26: {
        span(wire, columns, i * SPANS + SandboxSpan.namespace)
        break
      }

      case 32: {
        columns.attempts[i] = wire.varint()
        break
      }

      default:
        wire.skip(tag)
    }
  }
}

function span(wire: Wire, columns: SandboxColumns, at: number): void {
  const end = wire.end()
  columns.starts[at] = wire.pos
  columns.ends[at] = end
  wire.pos = end
}

function allocate(bytes: Buffer, capacity: number): SandboxColumns {
  return {
    bytes,
    count: 0,
    starts: new Int32Array(capacity * SPANS).fill(-1),
    ends: new Int32Array(capacity * SPANS).fill(-1),
    states: new Int32Array(capacity),
    attempts: new Uint32Array(capacity),
    createdHigh: new Int32Array(capacity),
    createdLow: new Uint32Array(capacity),
  }
}

function grow(columns: SandboxColumns): SandboxColumns {
  const wider = allocate(columns.bytes, columns.states.length * 2)
  wider.count = columns.count
  for (const key of ['starts', 'ends', 'states', 'attempts', 'createdHigh', 'createdLow'] as const) {
    ;(wider[key] as Int32Array | Uint32Array).set(columns[key])
  }

  return wider
}
