import {lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, statSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {ContainerRoot} from '../../../src/lib/host/container-root.js'
import {copyFromRoot, copyIntoRoot, parseCopyEnd} from '../../../src/lib/host/copy.js'

const NO_USERNS = {uid: [], gid: []}

/** A container's root as a directory, with a tree to copy and a symlink out of it; and a local scratch directory. */
function setUp(): {rootPath: string; local: string; hostSecret: string} {
  const base = mkdtempSync(join(tmpdir(), 'podctl-cp-'))
  const rootPath = join(base, 'rootfs')
  mkdirSync(join(rootPath, 'data/sub'), {recursive: true})
  mkdirSync(join(rootPath, 'etc'))
  writeFileSync(join(rootPath, 'data/greeting.txt'), 'hello\n', {mode: 0o640})
  writeFileSync(join(rootPath, 'data/sub/run.sh'), '#!/bin/sh\n', {mode: 0o755})
  symlinkSync('greeting.txt', join(rootPath, 'data/link'))
  symlinkSync('../../secret', join(rootPath, 'etc/out'))
  writeFileSync(join(base, 'secret'), 'host only\n')
  const local = join(base, 'local')
  mkdirSync(local)
  return {rootPath, local, hostSecret: join(base, 'secret')}
}

describe('cp arguments', () => {
  it('reads POD[/CONTAINER]:PATH as kubectl cp does; a path starting with / or . is local', () => {
    expect(parseCopyEnd('web:/etc/x')).toEqual({kind: 'container', ref: 'web', path: '/etc/x'})
    expect(parseCopyEnd('web/app:/etc/x')).toEqual({kind: 'container', ref: 'web/app', path: '/etc/x'})
    expect(parseCopyEnd('./a:b')).toEqual({kind: 'local', path: './a:b'})
    expect(parseCopyEnd('/tmp/a:b')).toEqual({kind: 'local', path: '/tmp/a:b'})
    expect(parseCopyEnd('notes.txt')).toEqual({kind: 'local', path: 'notes.txt'})
    expect(() => parseCopyEnd('web:')).toThrow('web:: no path after ":"; give POD[/CONTAINER]:PATH')
  })
})

describe('copy out of a container', () => {
  it('copies a file with its mode, into a local directory under its own name', () => {
    const {rootPath, local} = setUp()
    using root = ContainerRoot.open(rootPath, 'main (abc)')
    const result = copyFromRoot(root, '/data/greeting.txt', local, 'abc')
    expect(result).toMatchObject({direction: 'out', files: 1, bytes: 6, skipped: []})
    expect(readFileSync(join(local, 'greeting.txt'), 'utf8')).toBe('hello\n')
    expect(statSync(join(local, 'greeting.txt')).mode & 0o777).toBe(0o640 & ~process.umask())
  })

  it('copies a directory whole, its symlinks as symlinks', () => {
    const {rootPath, local} = setUp()
    using root = ContainerRoot.open(rootPath, 'main (abc)')
    const result = copyFromRoot(root, '/data', join(local, 'copy'), 'abc')
    expect(result).toMatchObject({files: 2, directories: 2, symlinks: 1})
    expect(readFileSync(join(local, 'copy/sub/run.sh'), 'utf8')).toBe('#!/bin/sh\n')
    expect(readlinkSync(join(local, 'copy/link'))).toBe('greeting.txt')
  })

  it('refuses a symlink out of the root (exit 18) and a missing file (exit 5)', () => {
    const {rootPath, local} = setUp()
    using root = ContainerRoot.open(rootPath, 'main (abc)')
    expect(() => copyFromRoot(root, '/etc/out', join(local, 'x'), 'abc')).toThrow(expect.objectContaining({exitCode: 18}))
    expect(() => copyFromRoot(root, '/nothing', join(local, 'x'), 'abc')).toThrow(expect.objectContaining({exitCode: 5}))
    expect(() => lstatSync(join(local, 'x'))).toThrow()
  })
})

describe('copy into a container', () => {
  it('copies a file under its name into a directory, or to the name given', () => {
    const {rootPath, local} = setUp()
    writeFileSync(join(local, 'new.txt'), 'new\n', {mode: 0o600})
    using root = ContainerRoot.open(rootPath, 'main (abc)')
    expect(copyIntoRoot(root, join(local, 'new.txt'), '/data', NO_USERNS, 'abc')).toMatchObject({direction: 'in', files: 1, bytes: 4})
    expect(readFileSync(join(rootPath, 'data/new.txt'), 'utf8')).toBe('new\n')
    expect(statSync(join(rootPath, 'data/new.txt')).mode & 0o777).toBe(0o600)
    copyIntoRoot(root, join(local, 'new.txt'), '/data/renamed.txt', NO_USERNS, 'abc')
    expect(readFileSync(join(rootPath, 'data/renamed.txt'), 'utf8')).toBe('new\n')
  })

  it('replaces a symlink at the destination instead of writing through it to the host', () => {
    const {rootPath, local, hostSecret} = setUp()
    writeFileSync(join(local, 'payload'), 'payload\n')
    using root = ContainerRoot.open(rootPath, 'main (abc)')
    // /etc/out leads out of the root: as a destination name it is replaced, never followed.
    copyIntoRoot(root, join(local, 'payload'), '/etc/out', NO_USERNS, 'abc')
    expect(readFileSync(hostSecret, 'utf8')).toBe('host only\n')
    expect(readFileSync(join(rootPath, 'etc/out'), 'utf8')).toBe('payload\n')
  })

  it('copies a directory tree into a directory, and refuses a destination whose directory leads out of the root', () => {
    const {rootPath, local} = setUp()
    mkdirSync(join(local, 'tree/inner'), {recursive: true})
    writeFileSync(join(local, 'tree/inner/a'), 'a')
    symlinkSync('inner/a', join(local, 'tree/l'))
    using root = ContainerRoot.open(rootPath, 'main (abc)')
    expect(copyIntoRoot(root, join(local, 'tree'), '/data', NO_USERNS, 'abc')).toMatchObject({files: 1, directories: 2, symlinks: 1})
    expect(readFileSync(join(rootPath, 'data/tree/inner/a'), 'utf8')).toBe('a')
    expect(readlinkSync(join(rootPath, 'data/tree/l'))).toBe('inner/a')
    expect(() => copyIntoRoot(root, join(local, 'tree'), '/etc/out/x', NO_USERNS, 'abc')).toThrow(/leads out of the container's root/)
  })
})
