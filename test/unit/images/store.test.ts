/** The image store as `images` shows it: rows, filters, references, the sandbox image. (rmi's plan: removal-plan.test.ts.) */
import {describe, expect, it} from 'vitest'

import {
  filterImageRows,
  imageRows,
  imagesOf,
  listImageRows,
  parseImageFilters,
  resolveImage,
  splitRepoTag,
} from '../../../src/lib/images/store.js'
import {sandboxImageFromInfo} from '../../../src/lib/images/sandbox-image.js'
import {all, bare, busybox, dangling, hex, hub, image, pause, storeClient} from '../../support/image-fixtures.js'

describe('splitRepoTag', () => {
  it('splits the tag after the last slash, leaving registry ports alone', () => {
    expect(splitRepoTag('localhost:5000/a/b:v1')).toEqual(['localhost:5000/a/b', 'v1'])
    expect(splitRepoTag('localhost:5000/a/b')).toEqual(['localhost:5000/a/b', ''])
    expect(splitRepoTag('busybox')).toEqual(['busybox', ''])
    expect(splitRepoTag('a/b@sha256:00')).toEqual(['a/b', ''])
  })
})

describe('imageRows', () => {
  const rows = imageRows(all)

  it('has one row per tag, sharing the image', () => {
    const busyboxRows = rows.filter((row) => row.image === busybox)
    expect(busyboxRows.map((row) => [row.repository, row.tag])).toEqual([
      ['localhost:5000/podctl/busybox', '1.36'],
      ['localhost:5000/podctl/busybox', 'latest'],
    ])
    expect(busyboxRows.every((row) => row.digest === `sha256:${hex('d')}`)).toBe(true)
  })

  it('shows an untagged image as <none>, named after its digest repository when it has one', () => {
    const danglingRows = rows.filter((row) => row.image === dangling)
    expect(danglingRows.map((row) => [row.repository, row.tag])).toEqual([['localhost:5000/old/app', '<none>']])
    expect(rows.filter((row) => row.image === bare).map((row) => [row.repository, row.tag, row.digest])).toEqual([['<none>', '<none>', '']])
  })

  it('sorts tagged rows by name, untagged rows last', () => {
    expect(rows.map((row) => `${row.repository}:${row.tag}`)).toEqual([
      'docker.io/library/alpine:3.19',
      'localhost:5000/podctl/busybox:1.36',
      'localhost:5000/podctl/busybox:latest',
      'localhost:5000/podctl/pause:3.9',
      'localhost:5000/old/app:<none>',
      '<none>:<none>',
    ])
  })
})

describe('image filters', () => {
  const rows = imageRows(all)
  const names = (filtered: ReturnType<typeof imageRows>) => filtered.map((row) => `${row.repository}:${row.tag}`)

  it('parses dangling and reference, rejecting anything else', () => {
    expect(parseImageFilters(['dangling=true', 'reference=a*', 'reference=b'])).toEqual({
      dangling: true,
      references: ['a*', 'b'],
      repository: undefined,
    })
    expect(() => parseImageFilters(['dangling=yes'])).toThrow(/dangling must be true or false/)
    expect(() => parseImageFilters(['before=x'])).toThrow(expect.objectContaining({exitCode: 2}))
    expect(() => parseImageFilters(['reference='])).toThrow(/give a pattern/)
  })

  it('dangling=true keeps untagged images, false the tagged ones', () => {
    expect(imagesOf(filterImageRows(rows, parseImageFilters(['dangling=true'])))).toEqual([dangling, bare])
    expect(imagesOf(filterImageRows(rows, parseImageFilters(['dangling=false'])))).toEqual([hub, busybox, pause])
  })

  it('reference= globs on repo and repo:tag, exact without *', () => {
    expect(names(filterImageRows(rows, parseImageFilters(['reference=localhost:5000/podctl/busybox:1.36'])))).toEqual([
      'localhost:5000/podctl/busybox:1.36',
    ])
    expect(names(filterImageRows(rows, parseImageFilters(['reference=localhost:5000/podctl/busybox'])))).toHaveLength(2)
    expect(names(filterImageRows(rows, parseImageFilters(['reference=busybox'])))).toEqual([])
    expect(names(filterImageRows(rows, parseImageFilters(['reference=*busybox:l*'])))).toEqual(['localhost:5000/podctl/busybox:latest'])
  })

  it('repeated reference filters are alternatives; other filters must also match', () => {
    const filters = parseImageFilters(['reference=*pause*', 'reference=*alpine*'])
    expect(names(filterImageRows(rows, filters))).toEqual(['docker.io/library/alpine:3.19', 'localhost:5000/podctl/pause:3.9'])
    expect(names(filterImageRows(rows, parseImageFilters(['reference=*app*', 'dangling=false'])))).toEqual([])
    expect(names(filterImageRows(rows, parseImageFilters(['reference=*app*', 'dangling=true'])))).toEqual(['localhost:5000/old/app:<none>'])
  })

  it('matches docker short names and the positional REPOSITORY[:TAG]', () => {
    expect(names(filterImageRows(rows, parseImageFilters([], 'alpine')))).toEqual(['docker.io/library/alpine:3.19'])
    expect(names(filterImageRows(rows, parseImageFilters([], 'alpine:3.19')))).toEqual(['docker.io/library/alpine:3.19'])
    expect(names(filterImageRows(rows, parseImageFilters([], 'localhost:5000/podctl/busybox:latest')))).toEqual([
      'localhost:5000/podctl/busybox:latest',
    ])
  })

  it('imagesOf gives each image once', () => {
    expect(imagesOf(rows)).toHaveLength(5)
  })
})

describe('resolveImage', () => {
  it('finds tags, default :latest, docker short names and digests', () => {
    expect(resolveImage(all, 'localhost:5000/podctl/busybox:1.36')).toBe(busybox)
    expect(resolveImage(all, 'localhost:5000/podctl/busybox')).toBe(busybox)
    expect(resolveImage(all, 'alpine:3.19')).toBe(hub)
    expect(resolveImage(all, `alpine@sha256:${hex('2')}`)).toBe(hub)
    expect(resolveImage(all, `localhost:5000/old/app@sha256:${hex('1')}`)).toBe(dangling)
  })

  it('finds IDs and ID prefixes with or without sha256:', () => {
    expect(resolveImage(all, `sha256:${hex('p')}`)).toBe(pause)
    expect(resolveImage(all, 'bbbb')).toBe(busybox)
    expect(resolveImage(all, 'sha256:aaa')).toBe(hub)
  })

  it('lists the images an ambiguous prefix matches', () => {
    const twins = [image('c', ['x:1']), {...image('c', ['y:1']), id: `sha256:cc${hex('e').slice(2)}`}]
    expect(() => resolveImage(twins, 'cc')).toThrow(/image ID prefix "cc" matches 2 images: .*x:1.*y:1/)
    expect(() => resolveImage(twins, 'cc')).toThrow(expect.objectContaining({exitCode: 15}))
  })

  it('is NotFound (exit 5) for unknown references, never a partial tag match', () => {
    expect(() => resolveImage(all, 'busybox')).toThrow(expect.objectContaining({exitCode: 5}))
    expect(() => resolveImage(all, 'localhost:5000/podctl/busybox:1.3')).toThrow(/not found/)
    expect(() => resolveImage(all, ' ')).toThrow(expect.objectContaining({exitCode: 2}))
  })
})

describe('sandboxImageFromInfo', () => {
  it('reads containerd 1.x and 2.x configs, else nothing', () => {
    expect(sandboxImageFromInfo({config: JSON.stringify({sandboxImage: 'pause:3.9'})})).toBe('pause:3.9')
    expect(sandboxImageFromInfo({config: JSON.stringify({pinnedImages: {sandbox: 'pause:3.10'}})})).toBe('pause:3.10')
    expect(sandboxImageFromInfo({config: '{not json'})).toBeUndefined()
    expect(sandboxImageFromInfo({})).toBeUndefined()
    expect(sandboxImageFromInfo(undefined)).toBeUndefined()
  })
})

describe('the store calls (commands never name the RPCs)', () => {
  it('listImageRows: one ListImages, rows filtered', async () => {
    const {client, calls} = storeClient({images: all})
    const rows = await listImageRows(client, parseImageFilters(['dangling=true']))
    expect(calls).toEqual(['listImages'])
    expect(imagesOf(rows)).toEqual([dangling, bare])
  })
})
