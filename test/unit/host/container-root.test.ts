import {mkdirSync, mkdtempSync, readFileSync, readlinkSync, symlinkSync, writeFileSync, writeSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {ContainerRoot, pathSteps} from '../../../src/lib/host/container-root.js'

/**
 * A container's root as a directory: /etc/hostname, /data/greeting.txt, and symlinks that stay in it
 * (relative, absolute) and that lead out of it. A host file beside the root stands for the host's own.
 */
function fakeRoot(): {root: string; hostSecret: string} {
  const base = mkdtempSync(join(tmpdir(), 'podctl-root-'))
  const root = join(base, 'rootfs')
  mkdirSync(join(root, 'etc'), {recursive: true})
  mkdirSync(join(root, 'data'))
  writeFileSync(join(root, 'etc/hostname'), 'inside\n')
  writeFileSync(join(root, 'data/greeting.txt'), 'hello\n')
  writeFileSync(join(base, 'secret'), 'host only\n')
  symlinkSync('greeting.txt', join(root, 'data/relative'))
  symlinkSync('/etc/hostname', join(root, 'data/absolute'))
  symlinkSync('../../secret', join(root, 'data/out'))
  symlinkSync('../data/out', join(root, 'etc/via'))
  symlinkSync('loop-b', join(root, 'data/loop-a'))
  symlinkSync('loop-a', join(root, 'data/loop-b'))
  return {root, hostSecret: join(base, 'secret')}
}

function read(root: ContainerRoot, path: string): string {
  const entry = root.lookup(path)
  const fd = root.openForReading(entry)
  try {
    return readFileSync(fd, 'utf8')
  } finally {
    root.release(fd)
    root.release(entry)
  }
}

describe('ContainerRoot', () => {
  it('splits paths into components without empty ones or "."', () => {
    expect(pathSteps('/a//b/./c/').map((step) => step.name)).toEqual(['a', 'b', 'c'])
  })

  it('follows symlinks inside the root: relative ones from their directory, absolute ones from the root', () => {
    using root = ContainerRoot.open(fakeRoot().root, 'main (abc)')
    expect(read(root, '/data/relative')).toBe('hello\n')
    // /etc/hostname of the container, not of the host.
    expect(read(root, '/data/absolute')).toBe('inside\n')
    expect(root.lookup('/data/relative', {followLast: false}).kind).toBe('symlink')
  })

  it('keeps a ".." of the path given at the root, as in the container', () => {
    using root = ContainerRoot.open(fakeRoot().root, 'main (abc)')
    expect(read(root, '/../../etc/hostname')).toBe('inside\n')
    expect(read(root, '/data/../etc/hostname')).toBe('inside\n')
  })

  it('refuses a symlink that leads out of the root, directly or through another link', () => {
    using root = ContainerRoot.open(fakeRoot().root, 'main (abc)')
    expect(() => root.lookup('/data/out')).toThrow(
      "/data/out in container main (abc) is a symlink that leads out of the container's root; podctl does not follow it",
    )
    expect(() => root.lookup('/etc/via')).toThrow(/symlink that leads out of the container's root/)
    expect(() => root.lookup('/data/out')).toThrow(expect.objectContaining({exitCode: 18}))
  })

  it('names what is missing (exit 5) and stops at a symlink loop', () => {
    using root = ContainerRoot.open(fakeRoot().root, 'main (abc)')
    expect(() => root.lookup('/data/nothing')).toThrow('/data/nothing does not exist in container main (abc)')
    expect(() => root.lookup('/data/nothing')).toThrow(expect.objectContaining({exitCode: 5}))
    expect(() => root.lookup('/data/greeting.txt/x')).toThrow('/data/greeting.txt in container main (abc) is not a directory')
    expect(() => root.lookup('/data/loop-a')).toThrow('too many levels of symlinks in /data/loop-a in container main (abc)')
  })

  it('replaces a symlink with a new file instead of writing through it', () => {
    const {root: path, hostSecret} = fakeRoot()
    using root = ContainerRoot.open(path, 'main (abc)')
    const data = root.lookup('/data')
    const fd = root.createFile(data, 'out', 0o640)
    writeSync(fd, 'written\n')
    root.release(fd)
    expect(readFileSync(hostSecret, 'utf8')).toBe('host only\n')
    expect(readFileSync(join(path, 'data/out'), 'utf8')).toBe('written\n')
    root.createSymlink(data, 'new-link', '/etc/hostname')
    expect(readlinkSync(join(path, 'data/new-link'))).toBe('/etc/hostname')
    const made = root.ensureDirectory(data, 'sub', 0o750)
    expect(made.kind).toBe('directory')
    expect(made.stats.mode & 0o777).toBe(0o750 & ~process.umask())
  })

  it('lists a directory sorted, and refuses to open a directory as a file', () => {
    using root = ContainerRoot.open(fakeRoot().root, 'main (abc)')
    const data = root.lookup('/data')
    expect(root.list(data)).toEqual(['absolute', 'greeting.txt', 'loop-a', 'loop-b', 'out', 'relative'])
    expect(() => root.openForReading(data)).toThrow('/data in container main (abc) is not a regular file')
  })

  it('fails with exit 18 naming the container when its root cannot be opened', () => {
    expect(() => ContainerRoot.open('/proc/0/root', 'main (abc)')).toThrow(
      expect.objectContaining({
        exitCode: 18,
        message: expect.stringMatching(/^cannot open the root of container main \(abc\) \(\/proc\/0\/root\)/),
      }),
    )
  })
})
