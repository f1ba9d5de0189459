/**
 * A watched directory moved away while one look lists it: readdir saw its files, their stat finds
 * nothing. Those files were not removed; the directory went, and its pods are kept, as when a look
 * finds the directory gone.
 */
import {chmodSync, mkdtempSync, renameSync, rmSync, writeFileSync} from 'node:fs'
import * as fsPromises from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it, vi} from 'vitest'

import {type Listing, listWatched} from '../../../../src/lib/kubelet/config/manifest-entries.js'

vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof fsPromises>()
  return {...real, readdir: vi.fn(real.readdir)}
})

/** The next readdir lists `path`, then `meanwhile` runs before its answer is used. */
function afterNextListing(meanwhile: (path: string) => void): void {
  const readdir = vi.mocked(fsPromises.readdir)
  const real = readdir.getMockImplementation()!
  readdir.mockImplementationOnce((async (path: string) => {
    const names = await (real as unknown as (path: string) => Promise<string[]>)(path)
    meanwhile(path)
    return names
  }) as never)
}

function watchedDirectory(): string {
  const dir = mkdtempSync(join(tmpdir(), 'podctl-moved-'))
  chmodSync(dir, 0o755)
  for (const name of ['one.yaml', 'two.yaml']) writeFileSync(join(dir, name), 'kind: Pod\n')
  return dir
}

async function look(path: string): Promise<Listing> {
  const listing: Listing = {found: new Map(), unreadable: new Map()}
  await listWatched(path, listing)
  return listing
}

describe('listWatched while the directory changes under it', () => {
  it('a directory moved away after its listing is said moved away (its pods kept), not found empty', async () => {
    const dir = watchedDirectory()
    afterNextListing((path) => renameSync(path, `${path}.away`))
    const {found, unreadable} = await look(dir)
    expect([...found.keys()]).toEqual([])
    expect([...unreadable]).toEqual([[dir, `${dir}: no such file or directory (moved away or removed?)`]])
    rmSync(`${dir}.away`, {recursive: true})
  })

  it('a file removed after the listing is just not found: the directory is still there', async () => {
    const dir = watchedDirectory()
    afterNextListing((path) => rmSync(join(path, 'one.yaml')))
    const {found, unreadable} = await look(dir)
    expect([...found.keys()]).toEqual([join(dir, 'two.yaml')])
    expect([...unreadable]).toEqual([])
    rmSync(dir, {recursive: true})
  })
})
