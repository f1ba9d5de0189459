import {appendFileSync, mkdtempSync, renameSync, rmSync, truncateSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {PassThrough, Writable} from 'node:stream'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {NotFoundError} from '../../../src/lib/errors.js'
import {LogFileReader, OrderedWriter, showLog} from '../../../src/lib/logs/follow.js'

let dir: string
let path: string
const opened: LogFileReader[] = []
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'podctl-log-'))
  path = join(dir, '0.log')
})
afterEach(async () => {
  await Promise.all(opened.splice(0).map((reader) => reader.close()))
  rmSync(dir, {recursive: true, force: true})
})

async function openLog(): Promise<LogFileReader> {
  const reader = await LogFileReader.open(path)
  opened.push(reader)
  return reader
}

const cri = (second: number, stream: 'stdout' | 'stderr', tag: 'P' | 'F', msg: string) =>
  `2024-05-01T10:00:${String(second).padStart(2, '0')}.000000001Z ${stream} ${tag} ${msg}\n`

function capture() {
  const out = new PassThrough()
  const err = new PassThrough()
  let stdout = ''
  let stderr = ''
  let both = ''
  out.on('data', (chunk) => {
    stdout += chunk
    both += chunk
  })
  err.on('data', (chunk) => {
    stderr += chunk
    both += chunk
  })
  return {writer: new OrderedWriter({stdout: out, stderr: err}), text: () => ({stdout, stderr, both})}
}

describe('LogFileReader', () => {
  it('names the path when the file is missing', async () => {
    const missing = join(dir, 'nope', '3.log')
    await expect(LogFileReader.open(missing)).rejects.toBeInstanceOf(NotFoundError)
    await expect(LogFileReader.open(missing)).rejects.toThrow(missing)
  })

  it('returns complete lines and keeps a half-written one for later', async () => {
    writeFileSync(path, 'one\ntwo\nthr')
    const reader = await openLog()
    expect(await reader.readLines()).toEqual(['one', 'two'])
    appendFileSync(path, 'ee\nfour')
    expect(await reader.readLines()).toEqual(['three'])
    expect(reader.takeRemainder()).toBe('four')
    expect(reader.takeRemainder()).toBeUndefined()
  })

  it('never cuts a multi-byte character between reads', async () => {
    const bytes = Buffer.from('héllo wörld\n')
    writeFileSync(path, bytes.subarray(0, 2)) // "h" + first byte of "é"
    const reader = await openLog()
    expect(await reader.readLines()).toEqual([])
    appendFileSync(path, bytes.subarray(2))
    expect(await reader.readLines()).toEqual(['héllo wörld'])
  })

  it('drains the old file, then reads the new one after rotation', async () => {
    writeFileSync(path, 'a\n')
    const reader = await openLog()
    expect(await reader.readLines()).toEqual(['a'])
    appendFileSync(path, 'b\n')
    renameSync(path, `${path}.20240501-100000`)
    writeFileSync(path, 'c\n')
    expect(await reader.readLines()).toEqual(['b', 'c'])
    appendFileSync(path, 'd\n')
    expect(await reader.readLines()).toEqual(['d'])
  })

  it('starts over when the file is truncated in place', async () => {
    writeFileSync(path, 'long line one\nlong line two\n')
    const reader = await openLog()
    await reader.readLines()
    truncateSync(path, 0)
    appendFileSync(path, 'x\n')
    expect(await reader.readLines()).toEqual(['x'])
  })
})

describe('showLog', () => {
  it('sends stdout and stderr lines to their own streams, in order', async () => {
    writeFileSync(
      path,
      cri(1, 'stdout', 'F', 'out1') + cri(2, 'stderr', 'F', 'err1') + 'junk\n' + cri(3, 'stdout', 'P', 'out') + cri(4, 'stdout', 'F', '2'),
    )
    const {writer, text} = capture()
    const reader = await openLog()
    const result = await showLog(reader, writer, {})
    expect(text()).toEqual({stdout: 'out1\nout2\n', stderr: 'err1\n', both: 'out1\nerr1\nout2\n'})
    expect(result).toEqual({lines: 3, malformed: 1})
  })

  it('applies tail and timestamps', async () => {
    writeFileSync(path, cri(1, 'stdout', 'F', 'a') + cri(2, 'stdout', 'F', 'b'))
    const {writer, text} = capture()
    await showLog(await openLog(), writer, {tail: 1, timestamps: true})
    expect(text().stdout).toBe('2024-05-01T10:00:02.000000001Z b\n')
  })

  it('prints an unfinished last line without a newline when not following', async () => {
    writeFileSync(path, cri(1, 'stdout', 'P', 'no newline'))
    const {writer, text} = capture()
    await showLog(await openLog(), writer, {})
    expect(text().stdout).toBe('no newline')
  })

  it('follows appended lines until the container stops, then returns', async () => {
    writeFileSync(path, cri(1, 'stdout', 'F', 'first') + cri(2, 'stdout', 'P', 'half-'))
    const {writer, text} = capture()
    let running = true
    let checks = 0
    const done = showLog(await openLog(), writer, {
      follow: true,
      timestamps: true,
      pollMs: 20,
      statusEveryMs: 50,
      async isRunning() {
        checks++
        return running
      },
    })
    await new Promise((resolve) => {
      setTimeout(resolve, 120)
    })
    expect(text().stdout).toBe('2024-05-01T10:00:01.000000001Z first\n2024-05-01T10:00:02.000000001Z half-')
    appendFileSync(path, cri(3, 'stdout', 'F', 'done') + cri(4, 'stderr', 'F', 'bye'))
    await new Promise((resolve) => {
      setTimeout(resolve, 120)
    })
    expect(text().stderr).toBe('2024-05-01T10:00:04.000000001Z bye\n') // shown while still following
    running = false
    appendFileSync(path, cri(5, 'stdout', 'F', 'last words'))
    await done
    expect(text().stdout).toBe(
      '2024-05-01T10:00:01.000000001Z first\n2024-05-01T10:00:02.000000001Z half-done\n2024-05-01T10:00:05.000000001Z last words\n',
    )
    expect(text().stderr).toBe('2024-05-01T10:00:04.000000001Z bye\n')
    expect(checks).toBeGreaterThan(1)
  })
})

describe('OrderedWriter', () => {
  it('goes on when its output failed (a closed pipe) instead of waiting forever for a drain', async () => {
    const closedPipe = new Writable({
      highWaterMark: 1,
      write: (_chunk, _encoding, done) => done(Object.assign(new Error('write EPIPE'), {code: 'EPIPE'})),
    })
    let failures = 0
    closedPipe.on('error', () => failures++)
    const writer = new OrderedWriter({stdout: closedPipe, stderr: closedPipe})
    await writer.write('stdout', 'first\n')
    await writer.flush()
    await writer.write('stdout', 'second\n')
    await writer.flush()
    expect(failures).toBe(1)
    expect(closedPipe.destroyed).toBe(true)
  })
})
