import {execFileSync} from 'node:child_process'
import {appendFileSync, chmodSync, mkdirSync, mkdtempSync, statSync, symlinkSync, truncateSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {type Listing, listWatched, readSettled} from '../../../../src/lib/kubelet/config/manifest-entries.js'
import {MAX_MANIFEST_BYTES} from '../../../../src/lib/manifest/load.js'
import {fileSignature} from '../../../../src/lib/util/file-signature.js'

function directory(): string {
  const dir = mkdtempSync(join(tmpdir(), 'podctl-entries-'))
  chmodSync(dir, 0o755)
  return dir
}

async function look(path: string): Promise<Listing> {
  const listing: Listing = {found: new Map(), unreadable: new Map()}
  await listWatched(path, listing)
  return listing
}

describe('listWatched: what one look at a watched path finds', () => {
  it('lists manifest files by name, follows links to files, names every other *.yaml with its reason', async () => {
    const dir = directory()
    writeFileSync(join(dir, 'a.yaml'), 'kind: Pod\n')
    writeFileSync(join(dir, 'target'), 'kind: Pod\n')
    symlinkSync(join(dir, 'target'), join(dir, 'linked.yml'))
    symlinkSync(join(dir, 'missing'), join(dir, 'dangling.yaml'))
    symlinkSync(join(dir, 'loop.json'), join(dir, 'loop.json'))
    execFileSync('mkfifo', [join(dir, 'fifo.yaml')])
    mkdirSync(join(dir, 'nested.yaml'))
    writeFileSync(join(dir, 'huge.yaml'), '')
    truncateSync(join(dir, 'huge.yaml'), 50 * 1024 * 1024)
    for (const skipped of ['a.yaml~', 'a.yaml.bak', '#a.yaml#', '.a.yaml.swp', '.hidden.yaml', 'README.md'])
      writeFileSync(join(dir, skipped), 'x')

    const {found, unreadable} = await look(dir)
    expect([...found.keys()]).toEqual([join(dir, 'a.yaml'), join(dir, 'linked.yml')])
    expect(found.get(join(dir, 'linked.yml'))).toBe(fileSignature(statSync(join(dir, 'target'))))
    const tooLarge = 'the manifest is larger than 3 MiB; podctl reads Pods up to that size (as the API server does): not read'
    expect(Object.fromEntries(unreadable)).toEqual({
      [join(dir, 'dangling.yaml')]: `${join(dir, 'dangling.yaml')} is a symbolic link to nothing (its target does not exist)`,
      [join(dir, 'fifo.yaml')]: `${join(dir, 'fifo.yaml')} is a FIFO, not a regular file: not read`,
      [join(dir, 'huge.yaml')]: `${join(dir, 'huge.yaml')}: ${tooLarge}`,
      [join(dir, 'loop.json')]: `${join(dir, 'loop.json')} is a symbolic link that loops (too many levels of links)`,
      [join(dir, 'nested.yaml')]: `${join(dir, 'nested.yaml')} is a directory: sub-directories are not read`,
    })
  })

  it('a watched path gone, others-writable or a FIFO is unreadable as a whole', async () => {
    const dir = directory()
    expect(Object.fromEntries((await look(join(dir, 'gone'))).unreadable)).toEqual({
      [join(dir, 'gone')]: `${join(dir, 'gone')}: no such file or directory (moved away or removed?)`,
    })
    const open = join(dir, 'open')
    mkdirSync(open)
    writeFileSync(join(open, 'a.yaml'), 'kind: Pod\n')
    chmodSync(open, 0o777)
    expect((await look(open)).found.size).toBe(0)
    expect((await look(open)).unreadable.get(open)).toContain('is writable by users other than its owner (mode 0777)')
    const fifo = join(dir, 'given.yaml')
    execFileSync('mkfifo', [fifo])
    expect((await look(fifo)).unreadable.get(fifo)).toBe(`${fifo} is a FIFO, not a regular file: not read`)
  })
})

describe('readSettled: a settled file read whole, or not at all', () => {
  it('reads the file still as seen', async () => {
    const path = join(directory(), 'a.yaml')
    writeFileSync(path, 'kind: Pod\n')
    expect(await readSettled(path, fileSignature(statSync(path)))).toEqual({text: 'kind: Pod\n'})
  })

  it('a file written to since it was seen, grown past the limit or gone is "changed": looked at again', async () => {
    const path = join(directory(), 'a.yaml')
    writeFileSync(path, 'kind: Pod\n')
    const seen = fileSignature(statSync(path))
    appendFileSync(path, 'metadata: {name: a}\n')
    expect(await readSettled(path, seen)).toBe('changed')
    truncateSync(path, MAX_MANIFEST_BYTES + 1)
    expect(await readSettled(path, fileSignature(statSync(path)))).toBe('changed')
    expect(await readSettled(`${path}.gone`, seen)).toBe('changed')
  })

  it('a FIFO put in the file’s place is never waited on', async () => {
    const path = join(directory(), 'a.yaml')
    execFileSync('mkfifo', [path])
    expect(await readSettled(path, fileSignature(statSync(path)))).toBe('changed')
  })
})
