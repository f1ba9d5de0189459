import {describe, expect, it} from 'vitest'

import {ConnectionError, encodeFrame, ErrorCode, type Frame, FrameReader, FrameType} from '../../../src/lib/cri/http2/frames.js'

/** The frame reader must give the same frames however the socket cuts the bytes. */
const frames = [
  encodeFrame(FrameType.SETTINGS, 0, 0, Buffer.alloc(12, 1)),
  encodeFrame(FrameType.DATA, 1, 1, Buffer.from('x'.repeat(16_384))),
  encodeFrame(FrameType.HEADERS, 4, 3, Buffer.alloc(0)),
  encodeFrame(FrameType.DATA, 0, 0x7f_ff_ff_ff, Buffer.from('tail')),
]
const stream = Buffer.concat(frames)

function readInPieces(cuts: number[]): Array<Omit<Frame, 'payload'> & {payload: string}> {
  const reader = new FrameReader()
  const read: Frame[] = []
  let at = 0
  for (const cut of [...cuts, stream.length]) {
    read.push(...reader.push(stream.subarray(at, Math.max(at, cut))))
    at = Math.max(at, cut)
  }

  return read.map((frame) => ({...frame, payload: frame.payload.toString('latin1')}))
}

describe('FrameReader', () => {
  const whole = readInPieces([])

  it('reads frames whole in one chunk', () => {
    expect(whole.map((frame) => [frame.type, frame.flags, frame.streamId, frame.payload.length])).toEqual([
      [FrameType.SETTINGS, 0, 0, 12],
      [FrameType.DATA, 1, 1, 16_384],
      [FrameType.HEADERS, 4, 3, 0],
      [FrameType.DATA, 0, 0x7f_ff_ff_ff, 4],
    ])
  })

  it('reads the same frames cut anywhere: inside headers, inside payloads, a byte at a time', () => {
    expect(readInPieces(Array.from({length: stream.length}, (_, index) => index))).toEqual(whole)
    for (const size of [3, 9, 10, 4096, 16_393, 16_400]) {
      expect(readInPieces(Array.from({length: Math.ceil(stream.length / size)}, (_, index) => index * size))).toEqual(whole)
    }
  })

  it('refuses a frame over the maximum size before it arrives', () => {
    const header = encodeFrame(FrameType.DATA, 0, 1, Buffer.alloc(16_385)).subarray(0, 9)
    expect(() => new FrameReader().push(header)).toThrow(ConnectionError)
    expect(() => new FrameReader().push(header)).toThrow(expect.objectContaining({code: ErrorCode.FRAME_SIZE_ERROR}))
  })
})
