/**
 * SPDY/3.1 framing, the part of it the CRI streaming server speaks (containerd's and CRI-O's servers
 * are k8s.io/apimachinery's httpstream/spdy on moby/spdystream). Only what a client of
 * remote-command and port-forward needs: SYN_STREAM out, SYN_REPLY / RST_STREAM / PING / GOAWAY in,
 * data frames both ways. spdystream does no flow control (it ignores WINDOW_UPDATE and SETTINGS),
 * so neither does this client.
 */

export const SPDY_VERSION = 3

export const ControlType = {
  SYN_STREAM: 1,
  SYN_REPLY: 2,
  RST_STREAM: 3,
  SETTINGS: 4,
  PING: 6,
  GOAWAY: 7,
  HEADERS: 8,
  WINDOW_UPDATE: 9,
} as const

/** FLAG_FIN on data and control frames: the sender's half of the stream is done. */
export const FLAG_FIN = 0x01

/** RST_STREAM status codes used here. */
export const RstStatus = {PROTOCOL_ERROR: 1, CANCEL: 5} as const

/** A frame's payload is at most 2^24 - 1 bytes; data is cut well below that. */
export const MAX_DATA_FRAME = 32 * 1024

export type Frame =
  {kind: 'data'; streamId: number; flags: number; data: Buffer} | {kind: 'control'; type: number; flags: number; payload: Buffer}

export function encodeDataFrame(streamId: number, data: Buffer, fin = false): Buffer {
  const frame = Buffer.alloc(8 + data.length)
  frame.writeUInt32BE(streamId & 0x7f_ff_ff_ff, 0)
  frame.writeUInt32BE(((fin ? FLAG_FIN : 0) << 24) | data.length, 4)
  data.copy(frame, 8)
  return frame
}

export function encodeControlFrame(type: number, flags: number, payload: Buffer): Buffer {
  const frame = Buffer.alloc(8 + payload.length)
  frame.writeUInt16BE(0x80_00 | SPDY_VERSION, 0)
  frame.writeUInt16BE(type, 2)
  frame.writeUInt32BE(((flags & 0xff) << 24) | payload.length, 4)
  payload.copy(frame, 8)
  return frame
}

export function encodeSynStream(streamId: number, headerBlock: Buffer, flags = 0): Buffer {
  const fixed = Buffer.alloc(10)
  fixed.writeUInt32BE(streamId & 0x7f_ff_ff_ff, 0)
  // associated-to-stream-id 0, priority 0, slot 0
  return encodeControlFrame(ControlType.SYN_STREAM, flags, Buffer.concat([fixed, headerBlock]))
}

export function encodeRstStream(streamId: number, status: number): Buffer {
  const payload = Buffer.alloc(8)
  payload.writeUInt32BE(streamId & 0x7f_ff_ff_ff, 0)
  payload.writeUInt32BE(status, 4)
  return encodeControlFrame(ControlType.RST_STREAM, 0, payload)
}

export function encodePing(id: number): Buffer {
  const payload = Buffer.alloc(4)
  payload.writeUInt32BE(id >>> 0, 0)
  return encodeControlFrame(ControlType.PING, 0, payload)
}

export function encodeGoAway(lastGoodStreamId: number, status = 0): Buffer {
  const payload = Buffer.alloc(8)
  payload.writeUInt32BE(lastGoodStreamId & 0x7f_ff_ff_ff, 0)
  payload.writeUInt32BE(status, 4)
  return encodeControlFrame(ControlType.GOAWAY, 0, payload)
}

/** The name/value block of SYN_STREAM before compression: count, then length-prefixed lowercase names and values. */
export function encodeHeaderPairs(headers: Readonly<Record<string, string>>): Buffer {
  const entries = Object.entries(headers)
  const parts: Buffer[] = [uint32(entries.length)]
  for (const [name, value] of entries) {
    const n = Buffer.from(name.toLowerCase(), 'utf8')
    const v = Buffer.from(value, 'utf8')
    parts.push(uint32(n.length), n, uint32(v.length), v)
  }

  return Buffer.concat(parts)
}

/** The inverse of encodeHeaderPairs (for tests and the fake server). */
export function decodeHeaderPairs(block: Buffer): Record<string, string> {
  const headers: Record<string, string> = {}
  let at = 4
  const count = block.readUInt32BE(0)
  for (let i = 0; i < count; i++) {
    const nameLength = block.readUInt32BE(at)
    const name = block.subarray(at + 4, at + 4 + nameLength).toString('utf8')
    at += 4 + nameLength
    const valueLength = block.readUInt32BE(at)
    headers[name] = block.subarray(at + 4, at + 4 + valueLength).toString('utf8')
    at += 4 + valueLength
  }

  return headers
}

/**
 * SPDY compresses every header block of a session with one zlib stream (and a preset dictionary the
 * receiver may use). A zlib stream made of stored (uncompressed) deflate blocks is valid for any
 * zlib reader, needs no compressor and no dictionary: a 2-byte zlib header without FDICT once, then
 * per header block one non-final stored block with the pairs and an empty one, exactly what a sync
 * flush ends with. The empty block matters: Go's flate hands out a block's bytes only when it reads
 * the next block header, and the header reader is cut at the frame's end. Blocks are < 64 KiB.
 */
export class HeaderBlockWriter {
  private started = false

  encode(headers: Readonly<Record<string, string>>): Buffer {
    const pairs = encodeHeaderPairs(headers)
    if (pairs.length > 0xff_ff) throw new Error('SPDY header block too large')
    const stored = Buffer.alloc(5)
    stored[0] = 0 // BFINAL 0, BTYPE 00 (stored), padding
    stored.writeUInt16LE(pairs.length, 1)
    stored.writeUInt16LE(~pairs.length & 0xff_ff, 3)
    const prefix = this.started ? Buffer.alloc(0) : Buffer.from([0x78, 0x01])
    this.started = true
    return Buffer.concat([prefix, stored, pairs, EMPTY_STORED_BLOCK])
  }
}

const EMPTY_STORED_BLOCK = Buffer.from([0x00, 0x00, 0x00, 0xff, 0xff])

/** Splits a byte stream into frames; push() returns the frames completed by the chunk. */
export class FrameReader {
  private pending: Buffer = Buffer.alloc(0)

  push(chunk: Buffer): Frame[] {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk])
    const frames: Frame[] = []
    while (this.pending.length >= 8) {
      const length = this.pending.readUInt32BE(4) & 0xff_ff_ff
      if (this.pending.length < 8 + length) break
      const flags = this.pending[4]
      const body = this.pending.subarray(8, 8 + length)
      if (this.pending[0] & 0x80) {
        const version = this.pending.readUInt16BE(0) & 0x7f_ff
        if (version !== SPDY_VERSION) throw new Error(`SPDY version ${version} frame (expected ${SPDY_VERSION})`)
        frames.push({kind: 'control', type: this.pending.readUInt16BE(2), flags, payload: Buffer.from(body)})
      } else {
        frames.push({kind: 'data', streamId: this.pending.readUInt32BE(0) & 0x7f_ff_ff_ff, flags, data: Buffer.from(body)})
      }

      this.pending = this.pending.subarray(8 + length)
    }

    return frames
  }
}

/** The stream a control frame is about (SYN_STREAM, SYN_REPLY, RST_STREAM, HEADERS, WINDOW_UPDATE), else 0. */
export function controlStreamId(frame: Frame & {kind: 'control'}): number {
  const aboutStream: number[] = [
    ControlType.SYN_STREAM,
    ControlType.SYN_REPLY,
    ControlType.RST_STREAM,
    ControlType.HEADERS,
    ControlType.WINDOW_UPDATE,
  ]
  if (!aboutStream.includes(frame.type) || frame.payload.length < 4) return 0
  return frame.payload.readUInt32BE(0) & 0x7f_ff_ff_ff
}

function uint32(value: number): Buffer {
  const buffer = Buffer.alloc(4)
  buffer.writeUInt32BE(value, 0)
  return buffer
}
