/**
 * Reading what the peer sends beyond single frames: header blocks split over HEADERS and
 * CONTINUATION (RFC 9113 section 6.10), and the parameters of a SETTINGS frame (section 6.5).
 */
import {
  ConnectionError,
  ErrorCode,
  Flag,
  type Frame,
  FrameType,
  MAX_FRAME_SIZE_CEILING,
  MAX_WINDOW_BYTES,
  Setting,
  unpad,
} from './frames.js'

/** A header block bigger than this is no runtime's answer: refused rather than buffered without bound. */
const MAX_HEADER_BLOCK_BYTES = 8 * 1024 * 1024

export interface HeaderBlock {
  streamId: number
  endStream: boolean
  block: Buffer
}

/** Joins HEADERS and its CONTINUATIONs; nothing else may come between them on the connection. */
export class HeaderBlockAssembler {
  private open?: {streamId: number; endStream: boolean; fragments: Buffer[]; bytes: number}

  get expectingContinuation(): boolean {
    return this.open !== undefined
  }

  /** A HEADERS frame: the whole block when END_HEADERS is set, else undefined until its last CONTINUATION. */
  headers(frame: Frame): HeaderBlock | undefined {
    const fragment = unpad(frame, frame.flags & Flag.PRIORITY ? 5 : 0)
    const endStream = (frame.flags & Flag.END_STREAM) !== 0
    if (frame.flags & Flag.END_HEADERS) return {streamId: frame.streamId, endStream, block: fragment}
    this.open = {streamId: frame.streamId, endStream, fragments: [fragment], bytes: fragment.length}
    return undefined
  }

  continuation(frame: Frame): HeaderBlock | undefined {
    const {open} = this
    if (!open || frame.streamId !== open.streamId) {
      throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'CONTINUATION without a HEADERS frame to continue')
    }

    open.fragments.push(frame.payload)
    open.bytes += frame.payload.length
    if (open.bytes > MAX_HEADER_BLOCK_BYTES) throw new ConnectionError(ErrorCode.ENHANCE_YOUR_CALM, 'a header block over 8 MiB')
    if ((frame.flags & Flag.END_HEADERS) === 0) return undefined
    this.open = undefined
    return {streamId: open.streamId, endStream: open.endStream, block: Buffer.concat(open.fragments)}
  }

  /** Any other frame while a block is open breaks the connection (section 6.10). */
  checkInterleaving(frame: Frame): void {
    if (this.open && frame.type !== FrameType.CONTINUATION) {
      throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'a frame between HEADERS and its CONTINUATION')
    }
  }
}

/** The settings a client acts on; the others (header table size, push, header list size) need nothing from it. */
export interface PeerSettings {
  maxConcurrentStreams?: number
  initialWindowSize?: number
  maxFrameSize?: number
}

export function readSettings(frame: Frame): PeerSettings {
  if (frame.streamId !== 0) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'SETTINGS on a stream')
  if (frame.payload.length % 6 !== 0) throw new ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'SETTINGS of a length not a multiple of 6')
  const settings: PeerSettings = {}
  for (let at = 0; at < frame.payload.length; at += 6) {
    const id = frame.payload.readUInt16BE(at)
    const value = frame.payload.readUInt32BE(at + 2)
    switch (id) {
      case Setting.MAX_CONCURRENT_STREAMS: {
        settings.maxConcurrentStreams = value
        break
      }

      case Setting.INITIAL_WINDOW_SIZE: {
        settings.initialWindowSize = checkWindow(value)
        break
      }

      case Setting.MAX_FRAME_SIZE: {
        settings.maxFrameSize = checkFrameSize(value)
        break
      }

      default:
        if (id === Setting.ENABLE_PUSH && value > 1) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, `ENABLE_PUSH of ${value}`)
    }
  }

  return settings
}

function checkWindow(value: number): number {
  if (value > MAX_WINDOW_BYTES) throw new ConnectionError(ErrorCode.FLOW_CONTROL_ERROR, `INITIAL_WINDOW_SIZE of ${value}`)
  return value
}

function checkFrameSize(value: number): number {
  if (value < 16_384 || value > MAX_FRAME_SIZE_CEILING) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, `MAX_FRAME_SIZE of ${value}`)
  return value
}

/** A frame whose payload must be exactly `bytes` long (PING, RST_STREAM, WINDOW_UPDATE, PRIORITY). */
export function checkLength(frame: Frame, bytes: number, name: string): void {
  if (frame.payload.length !== bytes) {
    throw new ConnectionError(ErrorCode.FRAME_SIZE_ERROR, `${name} of ${frame.payload.length} bytes, not ${bytes}`)
  }
}
