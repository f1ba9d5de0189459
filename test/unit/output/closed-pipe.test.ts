import {PassThrough} from 'node:stream'

import {afterEach, describe, expect, it, vi} from 'vitest'

import {ExitCode} from '../../../src/lib/errors.js'
import {endQuietlyOnClosedPipe, holdExitOnOutputFailure} from '../../../src/lib/output/closed-pipe.js'

/** A stand-in for stdout whose writes fail as a hung-up terminal's do. */
function failingOutput(): {stream: NodeJS.WriteStream; fail: () => void} {
  const stream = new PassThrough() as unknown as NodeJS.WriteStream
  const error = Object.assign(new Error('write EIO'), {code: 'EIO'})
  return {stream, fail: () => stream.emit('error', error)}
}

afterEach(() => {
  vi.restoreAllMocks()
  process.exitCode = undefined
})

describe('a failed write to podctl output', () => {
  it('ends podctl at once when nothing holds the exit', () => {
    const exit = vi.spyOn(process, 'exit').mockImplementation((() => undefined) as never)
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true)
    const output = failingOutput()
    endQuietlyOnClosedPipe([output.stream])
    output.fail()
    expect(exit).toHaveBeenCalledWith(ExitCode.OUTPUT_FAILED)
  })

  it('aborts a hold instead (a debug session still removes its container), and exits with the same code later', () => {
    const exit = vi.spyOn(process, 'exit').mockImplementation((() => undefined) as never)
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true)
    const output = failingOutput()
    endQuietlyOnClosedPipe([output.stream])
    const hold = holdExitOnOutputFailure()
    output.fail()
    expect(exit).not.toHaveBeenCalled()
    expect(hold.signal.aborted).toBe(true)
    expect(process.exitCode).toBe(ExitCode.OUTPUT_FAILED)
    // The work cleaned up: podctl ends as the failed write would have, whatever error the work ends with.
    hold.release()
    expect(exit).toHaveBeenCalledWith(ExitCode.OUTPUT_FAILED)
  })
})

describe('holdExitOnOutputFailure', () => {
  it('aborts its signal when the interruption it joins is aborted, and no more once released', () => {
    const interruption = new AbortController()
    const exit = vi.spyOn(process, 'exit').mockImplementation((() => undefined) as never)
    const hold = holdExitOnOutputFailure(interruption.signal)
    interruption.abort()
    expect(hold.signal.aborted).toBe(true)
    hold.release()
    expect(exit).not.toHaveBeenCalled()
    const later = new AbortController()
    const released = holdExitOnOutputFailure(later.signal)
    released.release()
    later.abort()
    expect(released.signal.aborted).toBe(false)
  })
})
