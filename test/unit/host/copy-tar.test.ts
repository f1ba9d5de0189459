/**
 * `podctl cp -` through a container's root (a directory standing for it): archives out that GNU tar
 * reads, archives in from GNU tar, and hostile archives that try to write outside the directory.
 */
import {execFileSync} from 'node:child_process'
import {existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, statSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {Readable} from 'node:stream'

import {describe, expect, it} from 'vitest'

import {ContainerRoot} from '../../../src/lib/host/container-root.js'
import {extractIntoRoot, tarFromRoot} from '../../../src/lib/host/copy-tar.js'
import {encodeHeader, endOfArchive} from '../../../src/lib/host/tar-format.js'
import {TarWriter} from '../../../src/lib/host/tar-writer.js'

const NO_USERNS = {uid: [], gid: []}
/** A user namespace whose 0..65535 are the host's 100000..165535, as a rootless or userns pod has. */
const USERNS = {uid: [{inside: 0, outside: 100_000, count: 65_536}], gid: [{inside: 0, outside: 100_000, count: 65_536}]}

/** A root with /data (a file, a subdirectory, a symlink) and /srv to extract into; a host secret beside it. */
function setUp(): {base: string; rootPath: string; hostSecret: string} {
  const base = mkdtempSync(join(tmpdir(), 'podctl-cptar-'))
  const rootPath = join(base, 'rootfs')
  mkdirSync(join(rootPath, 'data/sub'), {recursive: true})
  mkdirSync(join(rootPath, 'srv'))
  writeFileSync(join(rootPath, 'data/greeting.txt'), 'hello\n', {mode: 0o640})
  writeFileSync(join(rootPath, 'data/sub/run.sh'), '#!/bin/sh\n', {mode: 0o755})
  symlinkSync('greeting.txt', join(rootPath, 'data/link'))
  symlinkSync('../../secret', join(rootPath, 'srv/out'))
  writeFileSync(join(base, 'secret'), 'host only\n')
  return {base, rootPath, hostSecret: join(base, 'secret')}
}

async function archiveOf(write: (writer: TarWriter) => Promise<void>): Promise<Buffer> {
  const chunks: Buffer[] = []
  const writer = new TarWriter(async (chunk) => {
    chunks.push(Buffer.from(chunk))
  })
  await write(writer)
  await writer.end()
  return Buffer.concat(chunks)
}

const meta = {mode: 0o644, uid: 0, gid: 0, mtime: 1_600_000_000}
const text = (content: string) => {
  const bytes = Buffer.from(content)
  let done = false
  return (buffer: Buffer) => (done ? 0 : ((done = true), bytes.copy(buffer)))
}

describe('a tar stream out of a container', () => {
  it('archives a directory that GNU tar lists and extracts, owners as the container sees them', async () => {
    const {base, rootPath} = setUp()
    execFileSync('chown', ['-h', '101000:100050', join(rootPath, 'data/greeting.txt')])
    using root = ContainerRoot.open(rootPath, 'main (abc)')
    const chunks: Buffer[] = []
    const result = await tarFromRoot(
      root,
      '/data',
      async (chunk) => {
        chunks.push(Buffer.from(chunk))
      },
      USERNS,
      'abc',
    )
    expect(result).toEqual({direction: 'out', containerId: 'abc', files: 2, directories: 2, symlinks: 1, bytes: 16, skipped: []})
    writeFileSync(join(base, 'out.tar'), Buffer.concat(chunks))
    const listing = execFileSync('tar', ['-tvf', join(base, 'out.tar'), '--numeric-owner'], {encoding: 'utf8'})
    const lines = listing.trim().split('\n')
    expect(lines.map((line) => line.replace(/ +\d{4}-\d\d-\d\d \d\d:\d\d /, ' DATE ').replaceAll(/ +/g, ' '))).toEqual([
      expect.stringMatching(/^drwx.* DATE data\/$/),
      '-rw-r----- 1000/50 6 DATE data/greeting.txt',
      expect.stringMatching(/^lrwxrwxrwx .* 0 DATE data\/link -> greeting.txt$/),
      expect.stringMatching(/^drwx.* DATE data\/sub\/$/),
      expect.stringMatching(/^-rwxr-xr-x .* 10 DATE data\/sub\/run.sh$/),
    ])
    mkdirSync(join(base, 'x'))
    execFileSync('tar', ['-xf', join(base, 'out.tar'), '-C', join(base, 'x')])
    expect(readFileSync(join(base, 'x/data/sub/run.sh'), 'utf8')).toBe('#!/bin/sh\n')
    expect(statSync(join(base, 'x/data/greeting.txt')).mtimeMs).toBe(
      Math.floor(statSync(join(rootPath, 'data/greeting.txt')).mtimeMs / 1000) * 1000,
    )
  })

  it('archives a single file under its own name, and refuses a symlink out of the root (exit 18)', async () => {
    const {rootPath} = setUp()
    using root = ContainerRoot.open(rootPath, 'main (abc)')
    const chunks: Buffer[] = []
    const sink = async (chunk: Buffer) => {
      chunks.push(Buffer.from(chunk))
    }

    expect(await tarFromRoot(root, '/data/link', sink, NO_USERNS, 'abc')).toMatchObject({files: 1, bytes: 6})
    expect(chunks[0].toString('utf8', 0, 12)).toBe('greeting.txt')
    await expect(tarFromRoot(root, '/srv/out', sink, NO_USERNS, 'abc')).rejects.toMatchObject({exitCode: 18})
  })
})

describe('a tar stream into a container', () => {
  it("extracts GNU tar's archive with modes, mtimes, symlinks and long names; owners mapped out of the user namespace", async () => {
    const {base, rootPath} = setUp()
    const source = join(base, 'src')
    const long = `${'l'.repeat(120)}/${'m'.repeat(130)}`
    mkdirSync(join(source, 'tree', long), {recursive: true})
    writeFileSync(join(source, 'tree', long, 'deep.txt'), 'deep')
    writeFileSync(join(source, 'tree/app.sh'), 'run', {mode: 0o750})
    symlinkSync('app.sh', join(source, 'tree/ln'))
    execFileSync('touch', ['-h', '-d', '2021-02-03T04:05:06Z', join(source, 'tree/app.sh'), join(source, 'tree')])
    const archive = execFileSync('tar', ['-c', '-C', source, '--owner=7:7', '--group=8:8', 'tree'])
    using root = ContainerRoot.open(rootPath, 'main (abc)')
    const result = await extractIntoRoot(root, Readable.from([archive]), '/srv', USERNS, 'abc')
    expect(result).toEqual({direction: 'in', containerId: 'abc', files: 2, directories: 3, symlinks: 1, bytes: 7, skipped: []})
    expect(readFileSync(join(rootPath, 'srv/tree', long, 'deep.txt'), 'utf8')).toBe('deep')
    const app = statSync(join(rootPath, 'srv/tree/app.sh'))
    expect({mode: app.mode & 0o7777, uid: app.uid, gid: app.gid, mtime: app.mtime.toISOString()}).toEqual({
      mode: 0o750,
      uid: 100_007,
      gid: 100_008,
      mtime: '2021-02-03T04:05:06.000Z',
    })
    expect(readlinkSync(join(rootPath, 'srv/tree/ln'))).toBe('app.sh')
    expect(statSync(join(rootPath, 'srv/tree')).mtime.toISOString()).toBe('2021-02-03T04:05:06.000Z')
  })

  it('makes hard links GNU tar records, inside the directory', async () => {
    const {base, rootPath} = setUp()
    mkdirSync(join(base, 'src'))
    writeFileSync(join(base, 'src/a'), 'same')
    execFileSync('ln', [join(base, 'src/a'), join(base, 'src/b')])
    const archive = execFileSync('tar', ['-c', '-C', join(base, 'src'), 'a', 'b'])
    using root = ContainerRoot.open(rootPath, 'main (abc)')
    expect(await extractIntoRoot(root, Readable.from([archive]), '/srv', NO_USERNS, 'abc')).toMatchObject({files: 2, bytes: 4})
    expect(statSync(join(rootPath, 'srv/b')).ino).toBe(statSync(join(rootPath, 'srv/a')).ino)
  })

  it('streams a large file through: each chunk is on disk before the next is read, never the whole file in memory', async () => {
    const {rootPath} = setUp()
    const size = 64 << 20
    const chunk = 1 << 20
    /** How far the reader had asked for more than the file on disk held: at most the chunk in hand. */
    let aheadMost = 0
    async function* archive(): AsyncGenerator<Buffer> {
      yield (await archiveOf(async (writer) => writer.directory({...meta, name: 'd'}))).subarray(0, 512)
      const header = await archiveOf(async (writer) => {
        await writer.file({...meta, name: 'd/big', size}, () => 0)
      })
      yield header.subarray(0, 512)
      for (let sent = 0; sent < size; sent += chunk) {
        if (sent > 0) aheadMost = Math.max(aheadMost, sent - statSync(join(rootPath, 'srv/d/big')).size)
        yield Buffer.alloc(chunk, 0x61)
      }

      yield Buffer.alloc(1024)
    }

    using root = ContainerRoot.open(rootPath, 'main (abc)')
    const result = await extractIntoRoot(root, archive(), '/srv', NO_USERNS, 'abc')
    expect(result).toMatchObject({files: 1, bytes: size})
    expect(statSync(join(rootPath, 'srv/d/big')).size).toBe(size)
    expect(aheadMost).toBeLessThanOrEqual(chunk)
  })
})

const BEFORE = 'extracted before it and left in place'
const NOTHING_BEFORE = `${BEFORE}: 0 files (0 bytes)`
const THROUGH_SYMLINK = 'is a symlink; podctl cp extracts nothing through it'

describe('hostile archives', () => {
  async function refused(write: (writer: TarWriter) => Promise<void>, expected: string) {
    const {base, rootPath, hostSecret} = setUp()
    using root = ContainerRoot.open(rootPath, 'main (abc)')
    const archive = await archiveOf(write)
    const error = await extractIntoRoot(root, Readable.from([archive]), '/srv', NO_USERNS, 'abc').catch((error_: unknown) => error_)
    expect(error).toMatchObject({exitCode: 18, message: expected})
    expect(readFileSync(hostSecret, 'utf8')).toBe('host only\n')
    expect(existsSync(join(base, 'evil')) || existsSync(join(rootPath, 'evil')) || existsSync('/tmp/podctl-cptar-evil')).toBe(false)
    return rootPath
  }

  it('refuses a ".." that climbs out of the directory', async () => {
    await refused(async (writer) => {
      await writer.file({...meta, name: 'ok/../../evil', size: 1}, text('x'))
    }, `tar entry ok/../../evil: ".." would lead out of the directory; podctl cp refuses it; ${NOTHING_BEFORE}`)
  })

  it('refuses an absolute name', async () => {
    await refused(async (writer) => {
      await writer.file({...meta, name: '/tmp/podctl-cptar-evil', size: 1}, text('x'))
    }, `tar entry /tmp/podctl-cptar-evil: an absolute name; podctl cp extracts names relative to the directory only; ${NOTHING_BEFORE}`)
  })

  it('refuses a path through a symlink the archive made, saying what it extracted before', async () => {
    const rootPath = await refused(async (writer) => {
      await writer.file({...meta, name: 'first.txt', size: 2}, text('ok'))
      await writer.symlink({...meta, name: 'escape', linkname: '../..'})
      await writer.file({...meta, name: 'escape/evil', size: 1}, text('x'))
    }, `tar entry escape/evil: /srv/escape in container main (abc) ${THROUGH_SYMLINK}; ${BEFORE}: 1 file (2 bytes), 1 symlink`)
    expect(readFileSync(join(rootPath, 'srv/first.txt'), 'utf8')).toBe('ok')
  })

  it('refuses a path through a symlink already in the directory, and a hard link to a file out of it', async () => {
    await refused(async (writer) => {
      await writer.file({...meta, name: 'out/x', size: 1}, text('x'))
    }, `tar entry out/x: /srv/out in container main (abc) ${THROUGH_SYMLINK}; ${NOTHING_BEFORE}`)
    const {rootPath} = setUp()
    using root = ContainerRoot.open(rootPath, 'main (abc)')
    const link = encodeHeader({...meta, name: 'h', type: 'hardlink', size: 0, linkname: '../data/greeting.txt'})
    const error = await extractIntoRoot(root, Readable.from([link, endOfArchive()]), '/srv', NO_USERNS, 'abc').catch(
      (error_: unknown) => error_,
    )
    expect(error).toMatchObject({
      exitCode: 18,
      message:
        'tar entry h (a hard link to ../data/greeting.txt): ".." would lead out of the directory; podctl cp refuses it; ' +
        'extracted before it and left in place: 0 files (0 bytes)',
    })
    expect(existsSync(join(rootPath, 'srv/h'))).toBe(false)
  })

  it("replaces a symlink at an entry's own name instead of writing through it", async () => {
    const {rootPath, hostSecret} = setUp()
    using root = ContainerRoot.open(rootPath, 'main (abc)')
    const archive = await archiveOf(async (writer) => {
      await writer.file({...meta, name: 'out', size: 4}, text('mine'))
    })
    await extractIntoRoot(root, Readable.from([archive]), '/srv', NO_USERNS, 'abc')
    expect(readFileSync(hostSecret, 'utf8')).toBe('host only\n')
    expect(lstatSync(join(rootPath, 'srv/out')).isFile()).toBe(true)
  })

  it('says which file a truncated archive left incomplete (exit 2)', async () => {
    const {rootPath} = setUp()
    using root = ContainerRoot.open(rootPath, 'main (abc)')
    const archive = await archiveOf(async (writer) => {
      await writer.file({...meta, name: 'a', size: 1}, text('a'))
      await writer.file({...meta, name: 'b', size: 2000}, text('b'.repeat(2000)))
    })
    const error = await extractIntoRoot(root, Readable.from([archive.subarray(0, 2048)]), '/srv', NO_USERNS, 'abc').catch(
      (error_: unknown) => error_,
    )
    expect(error).toMatchObject({
      exitCode: 2,
      message:
        "the tar archive ends in the middle of an entry's content (512 of 2000 bytes there), at byte 2048: it is truncated; " +
        'extracted before it and left in place: 1 file (1 byte); /srv/b left incomplete (512 of 2000 bytes)',
    })
  })
})
