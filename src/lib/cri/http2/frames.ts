/**
 * HTTP/2 framing (RFC 9113 section 4 and 6): the 9-octet frame header, a reader that cuts the
 * socket's bytes into frames, and the frames a client writes.
 */

export const FrameType = {
  DATA: 0x0,
  HEADERS: 0x1,
  PRIORITY: 0x2,
  RST_STREAM: 0x3,
  SETTINGS: 0x4,
  PUSH_PROMISE: 0x5,
  PING: 0x6,
  GOAWAY: 0x7,
  WINDOW_UPDATE: 0x8,
  CONTINUATION: 0x9,
} as const

export const Flag = {
  END_STREAM: 0x1,
  ACK: 0x1,
  END_HEADERS: 0x4,
  PADDED: 0x8,
  PRIORITY: 0x20,
} as const

/** Section 7's error codes. */
export const ErrorCode = {
  NO_ERROR: 0x0,
  PROTOCOL_ERROR: 0x1,
  INTERNAL_ERROR: 0x2,
  FLOW_CONTROL_ERROR: 0x3,
  SETTINGS_TIMEOUT: 0x4,
  STREAM_CLOSED: 0x5,
  FRAME_SIZE_ERROR: 0x6,
  REFUSED_STREAM: 0x7,
  CANCEL: 0x8,
  COMPRESSION_ERROR: 0x9,
  CONNECT_ERROR: 0xa,
  ENHANCE_YOUR_CALM: 0xb,
  INADEQUATE_SECURITY: 0xc,
  HTTP_1_1_REQUIRED: 0xd,
} as const

export const Setting = {
  HEADER_TABLE_SIZE: 0x1,
  ENABLE_PUSH: 0x2,
  MAX_CONCURRENT_STREAMS: 0x3,
  INITIAL_WINDOW_SIZE: 0x4,
  MAX_FRAME_SIZE: 0x5,
  MAX_HEADER_LIST_SIZE: 0x6,
} as const

/** The client's connection preface (section 3.4), before its SETTINGS. */
export const CLIENT_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1')
export const FRAME_HEADER_BYTES = 9
/** SETTINGS_MAX_FRAME_SIZE's initial value and floor; podctl keeps it (Go's servers send 16 KiB frames anyway). */
export const DEFAULT_MAX_FRAME_BYTES = 16_384
export const MAX_FRAME_SIZE_CEILING = 2 ** 24 - 1
/** The most a flow-control window may hold (section 6.9.1). */
export const MAX_WINDOW_BYTES = 2 ** 31 - 1
/** The window every connection and stream starts with (section 6.9.2). */
export const DEFAULT_WINDOW_BYTES = 65_535

export interface Frame {
  type: number
  flags: number
  streamId: number
  payload: Buffer
}

/** Raised for what the peer sent wrong: the connection ends with GOAWAY carrying `code`. */
export class ConnectionError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message)
  }
}

/**
 * Cuts a byte stream into frames without copying what it need not: frames whole in a socket chunk
 * are views of it (a DATA payload reaches the call uncopied), and only a frame cut by a chunk's end
 * is joined, from its own bytes alone. Copying each chunk onto the last one's tail cost a big
 * listing (8 MB at 5000 pods) a second copy of itself.
 */
export class FrameReader {
  /** The start of a frame the last chunk cut (a view of that chunk: its payload views keep it alive anyway). */
  private pending?: Buffer

  constructor(private readonly maxFrameBytes = DEFAULT_MAX_FRAME_BYTES) {}

  /** The whole frames `chunk` completes, in order. */
  push(chunk: Buffer): Frame[] {
    const frames: Frame[] = []
    let offset = 0
    if (this.pending) {
      offset = this.completePending(chunk, frames)
      if (this.pending) return frames
    }

    while (chunk.length - offset >= FRAME_HEADER_BYTES) {
      const size = FRAME_HEADER_BYTES + this.payloadLength(chunk, offset)
      if (chunk.length - offset < size) break
      frames.push(frameAt(chunk, offset, size))
      offset += size
    }

    if (offset < chunk.length) this.pending = chunk.subarray(offset)
    return frames
  }

  /** Joins the cut frame with the bytes of `chunk` it needs; returns how many it took. */
  private completePending(chunk: Buffer, frames: Frame[]): number {
    const pending = this.pending!
    const headerTaken = Math.max(0, FRAME_HEADER_BYTES - pending.length)
    const head = headerTaken > 0 ? Buffer.concat([pending, chunk.subarray(0, headerTaken)]) : pending
    if (head.length < FRAME_HEADER_BYTES) {
      this.pending = head
      return chunk.length
    }

    const size = FRAME_HEADER_BYTES + this.payloadLength(head, 0)
    const taken = Math.min(size - head.length, chunk.length - headerTaken)
    const joined = Buffer.concat([head, chunk.subarray(headerTaken, headerTaken + taken)])
    if (joined.length < size) {
      this.pending = joined
      return chunk.length
    }

    frames.push(frameAt(joined, 0, size))
    this.pending = undefined
    return headerTaken + taken
  }

  private payloadLength(bytes: Buffer, offset: number): number {
    const length = bytes.readUIntBE(offset, 3)
    if (length > this.maxFrameBytes) {
      throw new ConnectionError(ErrorCode.FRAME_SIZE_ERROR, `a frame of ${length} bytes, over the ${this.maxFrameBytes} allowed`)
    }

    return length
  }
}

function frameAt(bytes: Buffer, offset: number, size: number): Frame {
  return {
    type: bytes[offset + 3],
    flags: bytes[offset + 4],
    // The reserved top bit is ignored on receipt (section 4.1).
    streamId: bytes.readUInt32BE(offset + 5) & 0x7f_ff_ff_ff,
    payload: bytes.subarray(offset + FRAME_HEADER_BYTES, offset + size),
  }
}

export function encodeFrame(type: number, flags: number, streamId: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const frame = Buffer.allocUnsafe(FRAME_HEADER_BYTES + payload.length)
  frame.writeUIntBE(payload.length, 0, 3)
  frame[3] = type
  frame[4] = flags
  frame.writeUInt32BE(streamId, 5)
  payload.copy(frame, FRAME_HEADER_BYTES)
  return frame
}

export function settingsFrame(settings: ReadonlyArray<readonly [id: number, value: number]>): Buffer {
  const payload = Buffer.alloc(6 * settings.length)
  for (const [index, [id, value]] of settings.entries()) {
    payload.writeUInt16BE(id, 6 * index)
    payload.writeUInt32BE(value, 6 * index + 2)
  }

  return encodeFrame(FrameType.SETTINGS, 0, 0, payload)
}

export function windowUpdateFrame(streamId: number, increment: number): Buffer {
  const payload = Buffer.alloc(4)
  payload.writeUInt32BE(increment, 0)
  return encodeFrame(FrameType.WINDOW_UPDATE, 0, streamId, payload)
}

export function rstStreamFrame(streamId: number, code: number): Buffer {
  const payload = Buffer.alloc(4)
  payload.writeUInt32BE(code, 0)
  return encodeFrame(FrameType.RST_STREAM, 0, streamId, payload)
}

export function goawayFrame(lastStreamId: number, code: number, debug: string): Buffer {
  const payload = Buffer.alloc(8)
  payload.writeUInt32BE(lastStreamId, 0)
  payload.writeUInt32BE(code, 4)
  return encodeFrame(FrameType.GOAWAY, 0, 0, Buffer.concat([payload, Buffer.from(debug, 'utf8')]))
}

/** A header block as HEADERS and as many CONTINUATIONs as `maxFrameBytes` needs. */
export function headerFrames(streamId: number, block: Buffer, endStream: boolean, maxFrameBytes: number): Buffer[] {
  const frames: Buffer[] = []
  let at = 0
  do {
    const piece = block.subarray(at, at + maxFrameBytes)
    at += piece.length
    const last = at >= block.length
    const type = frames.length === 0 ? FrameType.HEADERS : FrameType.CONTINUATION
    const flags = (last ? Flag.END_HEADERS : 0) | (frames.length === 0 && endStream ? Flag.END_STREAM : 0)
    frames.push(encodeFrame(type, flags, streamId, piece))
  } while (at < block.length)

  return frames
}

/**
 * A padded frame's content (section 6.1 and 6.2): without the Pad Length octet, the padding, and
 * (for HEADERS with the PRIORITY flag) the 5 octets of priority, which podctl has no use for.
 */
export function unpad(frame: Frame, priorityBytes = 0): Buffer {
  let {payload} = frame
  if (frame.flags & Flag.PADDED) {
    if (payload.length === 0) throw new ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'a padded frame without its pad length')
    const padding = payload[0]
    if (padding >= payload.length) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'padding as long as the frame')
    payload = payload.subarray(1, payload.length - padding)
  }

  if (payload.length < priorityBytes) throw new ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'HEADERS too short for its priority')
  return payload.subarray(priorityBytes)
}
