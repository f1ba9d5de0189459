/**
 * The tar reader and writer of `podctl cp -`: round trips, GNU tar reading what podctl writes and
 * podctl reading what GNU tar writes (its default gnu format with long names, and pax), and damaged
 * archives refused with one line naming the byte.
 */
import {execFileSync, spawn} from 'node:child_process'
import {once} from 'node:events'
import {mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {Readable} from 'node:stream'

import {describe, expect, it} from 'vitest'

import {encodeHeader, endOfArchive, type TarHeader} from '../../../src/lib/host/tar-format.js'
import {readingNow, TarReader} from '../../../src/lib/host/tar-reader.js'
import {TarWriter} from '../../../src/lib/host/tar-writer.js'

const LONG_DIR = `${'d'.repeat(120)}/${'e'.repeat(90)}`
const LONG_NAME = `${LONG_DIR}/${'f'.repeat(150)}.txt`

/** An archive written by TarWriter, whole. */
async function written(write: (writer: TarWriter) => Promise<void>): Promise<Buffer> {
  const chunks: Buffer[] = []
  const writer = new TarWriter(async (chunk) => {
    chunks.push(Buffer.from(chunk))
  })
  await write(writer)
  await writer.end()
  return Buffer.concat(chunks)
}

function reader(buffer: Buffer, chunkSize = 700): TarReader {
  // Odd-sized chunks, as a pipe delivers them: headers and contents cross chunk boundaries.
  const chunks: Buffer[] = []
  for (let offset = 0; offset < buffer.length; offset += chunkSize) chunks.push(buffer.subarray(offset, offset + chunkSize))
  return new TarReader(Readable.from(chunks))
}

async function readAll(tar: TarReader): Promise<Array<TarHeader & {content: string; typeFlag: string}>> {
  const entries = []
  for (let entry = await tar.next(); entry; entry = await tar.next()) {
    const parts: Buffer[] = []
    for await (const chunk of entry.body()) parts.push(chunk)
    entries.push({...entry.header, typeFlag: entry.typeFlag, content: Buffer.concat(parts).toString()})
  }

  return entries
}

function fromString(text: string): (buffer: Buffer, length: number) => number {
  const bytes = Buffer.from(text)
  let offset = 0
  return (buffer, length) => {
    const count = bytes.copy(buffer, 0, offset, Math.min(bytes.length, offset + length))
    offset += count
    return count
  }
}

function scratch(): string {
  return mkdtempSync(join(tmpdir(), 'podctl-tar-'))
}

const base = {mode: 0o644, uid: 1234, gid: 50, mtime: 1_700_000_000}

describe('tar writer and reader', () => {
  it('round-trips files, directories and symlinks with modes, owners, mtimes, and long names through pax', async () => {
    const archive = await written(async (writer) => {
      await writer.directory({...base, name: 'top', mode: 0o750})
      await writer.file({...base, name: 'top/a.txt', size: 5}, fromString('hello'))
      await writer.symlink({...base, name: 'top/link', linkname: 'a.txt'})
      await writer.file({...base, name: LONG_NAME, size: 3, mode: 0o4755}, fromString('abc'))
      await writer.symlink({...base, name: 'top/far', linkname: `/${'t'.repeat(150)}`})
    })
    expect(archive.length % 512).toBe(0)
    const entries = await readAll(reader(archive))
    expect(entries.map(({name, type, mode, content}) => ({name, type, mode, content}))).toEqual([
      {name: 'top', type: 'directory', mode: 0o750, content: ''},
      {name: 'top/a.txt', type: 'file', mode: 0o644, content: 'hello'},
      {name: 'top/link', type: 'symlink', mode: 0o644, content: ''},
      {name: LONG_NAME, type: 'file', mode: 0o4755, content: 'abc'},
      {name: 'top/far', type: 'symlink', mode: 0o644, content: ''},
    ])
    expect(entries[2].linkname).toBe('a.txt')
    expect(entries[4].linkname).toBe(`/${'t'.repeat(150)}`)
    expect(entries[1]).toMatchObject({uid: 1234, gid: 50, mtime: 1_700_000_000, size: 5})
  })

  it('pads a file that shrank while read to the size its header announced, as GNU tar does', async () => {
    const archive = await written(async (writer) => {
      expect(await writer.file({...base, name: 'short', size: 10}, fromString('abc'))).toBe(3)
      await writer.file({...base, name: 'next', size: 2}, fromString('ok'))
    })
    const entries = await readAll(reader(archive, 512))
    expect(entries.map((entry) => [entry.name, entry.content])).toEqual([
      ['short', 'abc\0\0\0\0\0\0\0'],
      ['next', 'ok'],
    ])
  })

  it('writes what GNU tar lists and extracts: names over 100 bytes, symlinks, modes and mtimes', async () => {
    const archive = await written(async (writer) => {
      await writer.directory({...base, name: 'top', mode: 0o755})
      await writer.file({...base, name: `top/${LONG_NAME}`, size: 4, mode: 0o600}, fromString('long'))
      await writer.symlink({...base, name: 'top/link', linkname: 'target'})
    })
    const dir = scratch()
    writeFileSync(join(dir, 'a.tar'), archive)
    const listing = execFileSync('tar', ['-tvf', join(dir, 'a.tar'), '--numeric-owner'], {encoding: 'utf8'})
    expect(listing.split('\n')[0]).toMatch(/^drwxr-xr-x 1234\/50 +0 2023-11-14 \d\d:\d\d top\/$/)
    expect(listing).toMatch(/\n-rw------- 1234\/50 +4 2023-11-14 /)
    expect(listing).toContain(`top/${LONG_NAME}\n`)
    expect(listing).toMatch(/lrw-r--r-- 1234\/50 +0 .* top\/link -> target\n/)
    execFileSync('tar', ['-xf', join(dir, 'a.tar'), '-C', dir, '--no-same-owner'])
    expect(readFileSync(join(dir, 'top', LONG_NAME), 'utf8')).toBe('long')
  })

  it("reads GNU tar's own archives: its default format's long names and links, and pax", async () => {
    const dir = scratch()
    mkdirSync(join(dir, 'src', LONG_DIR), {recursive: true})
    writeFileSync(join(dir, 'src', LONG_NAME), 'from gnu tar')
    symlinkSync(`../${'x'.repeat(140)}`, join(dir, 'src/longlink'))
    for (const format of ['gnu', 'pax', 'ustar']) {
      if (format === 'ustar') continue // ustar cannot hold a 150-byte file name: GNU tar refuses it
      const archive = execFileSync('tar', ['-c', `--format=${format}`, '-C', join(dir, 'src'), '.'])
      const entries = await readAll(reader(archive, 333))
      const file = entries.find((entry) => entry.name === `./${LONG_NAME}`)
      expect(file, format).toMatchObject({type: 'file', content: 'from gnu tar', size: 12})
      expect(
        entries.find((entry) => entry.name === './longlink'),
        format,
      ).toMatchObject({type: 'symlink', linkname: `../${'x'.repeat(140)}`})
    }
  })
})

describe('reading now', () => {
  it("keeps a child's archive that exits before it is read (Node drops unread stdio at exit)", async () => {
    const dir = scratch()
    writeFileSync(join(dir, 'kept.txt'), 'kept')
    const tar = spawn('tar', ['-cf', '-', '-C', dir, 'kept.txt'])
    const archive = readingNow(tar.stdout)
    await once(tar, 'exit')
    const entries = await readAll(new TarReader(archive))
    expect(entries.map((entry) => [entry.name, entry.content])).toEqual([['kept.txt', 'kept']])
  })
})

describe('damaged archives', () => {
  it('refuses a header whose checksum is wrong, naming the byte', async () => {
    const archive = await written(async (writer) => {
      await writer.file({...base, name: 'a', size: 1}, fromString('a'))
      await writer.file({...base, name: 'b', size: 1}, fromString('b'))
    })
    archive[1024] ^= 0xff
    await expect(readAll(reader(archive))).rejects.toMatchObject({
      exitCode: 2,
      message: 'not a tar archive: the header at byte 1024 has a wrong checksum',
    })
  })

  it('refuses an archive cut in the middle of a file', async () => {
    const archive = await written(async (writer) => {
      await writer.file({...base, name: 'big', size: 2000}, fromString('x'.repeat(2000)))
    })
    await expect(readAll(reader(archive.subarray(0, 1500)))).rejects.toMatchObject({
      exitCode: 2,
      message: "the tar archive ends in the middle of an entry's content (988 of 2000 bytes there), at byte 1500: it is truncated",
    })
  })

  it('refuses an extended header too large to hold, and text where a number belongs', async () => {
    const huge = encodeHeader({...base, name: 'PaxHeader/x', type: 'file', size: 64 << 20, linkname: ''})
    huge[156] = 'x'.codePointAt(0)!
    fixChecksum(huge)
    await expect(readAll(reader(Buffer.concat([huge, endOfArchive()])))).rejects.toThrow(
      'the extended header at byte 0 is 67108864 bytes, more than podctl reads',
    )
    const bad = encodeHeader({...base, name: 'a', type: 'file', size: 0, linkname: ''})
    bad.write('12z4567\0', 124, 'ascii')
    fixChecksum(bad)
    await expect(readAll(reader(Buffer.concat([bad, endOfArchive()])))).rejects.toThrow(
      'the tar header at byte 0 has a size that is not a number ("12z4567")',
    )
  })

  it('ends quietly at two zero blocks, and refuses garbage that is not tar', async () => {
    expect(await readAll(reader(endOfArchive()))).toEqual([])
    await expect(readAll(reader(Buffer.from('hello, not a tar archive\n'.repeat(30))))).rejects.toThrow(
      'not a tar archive: the header at byte 0 has no checksum',
    )
  })
})

function fixChecksum(block: Buffer): void {
  block.fill(0x20, 148, 156)
  let sum = 0
  for (let i = 0; i < 512; i++) sum += block[i]
  block.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii')
}
