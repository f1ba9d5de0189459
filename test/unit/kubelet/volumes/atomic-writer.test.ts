import {lstatSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterEach, describe, expect, it} from 'vitest'

import {type Payload, setVolumeOwnership, writeAtomically} from '../../../../src/lib/kubelet/volumes/atomic-writer.js'

const dirs: string[] = []
function target(): string {
  const dir = mkdtempSync(join(tmpdir(), 'podctl-atomic-'))
  dirs.push(dir)
  return dir
}

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, {recursive: true, force: true})
})

const payload = (entries: Record<string, [string, number]>): Payload =>
  new Map(Object.entries(entries).map(([path, [data, mode]]) => [path, {data: Buffer.from(data), mode}]))

describe('writeAtomically', () => {
  it('writes a ..<timestamp> directory, the ..data link to it and one link per top-level entry', async () => {
    const dir = target()
    await writeAtomically(
      dir,
      payload({'a.conf': ['A', 0o644], 'nested/deep/b': ['B', 0o400]}),
      new Date(Date.UTC(2026, 10, 30, 17, 45, 1)),
    )
    const entries = readdirSync(dir).sort()
    expect(entries).toEqual([expect.stringMatching(/^\.\.2026_11_30_17_45_01\.\d+$/), '..data', 'a.conf', 'nested'])
    expect(readlinkSync(join(dir, '..data'))).toBe(entries[0])
    expect(readlinkSync(join(dir, 'a.conf'))).toBe('..data/a.conf')
    expect(readlinkSync(join(dir, 'nested'))).toBe('..data/nested')
    expect(readFileSync(join(dir, 'nested/deep/b'), 'utf8')).toBe('B')
    expect(statSync(join(dir, 'nested/deep/b')).mode & 0o777).toBe(0o400)
    expect(statSync(join(dir, entries[0])).mode & 0o777).toBe(0o755)
  })

  it('a second write swaps ..data, drops entries the new payload lacks and the old directory', async () => {
    const dir = target()
    await writeAtomically(dir, payload({old: ['1', 0o644], kept: ['1', 0o644]}))
    const first = readlinkSync(join(dir, '..data'))
    await writeAtomically(dir, payload({kept: ['2', 0o644]}), new Date(Date.now() + 1000))
    expect(readlinkSync(join(dir, '..data'))).not.toBe(first)
    expect(readdirSync(dir).filter((entry) => !entry.startsWith('..'))).toEqual(['kept'])
    expect(readdirSync(dir).filter((entry) => entry.startsWith('..2'))).toHaveLength(1)
    expect(readFileSync(join(dir, 'kept'), 'utf8')).toBe('2')
  })

  it('refuses paths that would leave the directory or collide with its own names', async () => {
    for (const bad of ['../x', '/abs', '..data/x', 'a/../../b']) {
      await expect(writeAtomically(target(), payload({[bad]: ['x', 0o644]}))).rejects.toThrow('invalid path in the volume payload')
    }
  })
})

describe('setVolumeOwnership', () => {
  it('gives fsGroup everything, adds group read (read-only volumes) and setgid on directories', async () => {
    const dir = target()
    await writeAtomically(dir, payload({key: ['v', 0o400]}))
    await setVolumeOwnership(dir, {fsGroup: 2000, readOnly: true})
    const data = join(dir, readlinkSync(join(dir, '..data')))
    expect(statSync(join(data, 'key')).gid).toBe(2000)
    expect(statSync(join(data, 'key')).mode & 0o7777).toBe(0o440)
    expect(statSync(data).mode & 0o7777).toBe(0o2755)
    expect(lstatSync(join(dir, 'key')).gid).toBe(2000)
  })

  it('read-write volumes get group rw; OnRootMismatch leaves a volume whose root already matches', async () => {
    const dir = target()
    await writeAtomically(dir, payload({key: ['v', 0o600]}))
    await setVolumeOwnership(dir, {fsGroup: 3000, readOnly: false})
    const file = join(dir, readlinkSync(join(dir, '..data')), 'key')
    expect(statSync(file).mode & 0o777).toBe(0o660)
    rmSync(file)
    await setVolumeOwnership(dir, {fsGroup: 3000, readOnly: false, changePolicy: 'OnRootMismatch'})
    expect(statSync(dir).gid).toBe(3000)
  })
})

describe('hostPath type checks', () => {
  it('use the kubelet words whether the path is missing or of another type', async () => {
    const {checkHostPath} = await import('../../../../src/lib/kubelet/volumes/pod-dirs.js')
    const dir = target()
    await expect(checkHostPath(join(dir, 'missing'), 'Directory')).rejects.toThrow(
      `hostPath type check failed: ${dir}/missing is not a directory`,
    )
    await expect(checkHostPath(dir, 'File')).rejects.toThrow(`hostPath type check failed: ${dir} is not a file`)
    await expect(checkHostPath(dir, 'Socket')).rejects.toThrow(`hostPath type check failed: ${dir} is not a socket`)
    await checkHostPath(join(dir, 'made/sub'), 'DirectoryOrCreate')
    expect(statSync(join(dir, 'made/sub')).isDirectory()).toBe(true)
    await checkHostPath(join(dir, 'file'), 'FileOrCreate')
    expect(statSync(join(dir, 'file')).isFile()).toBe(true)
  })
})
