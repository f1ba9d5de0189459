import {describe, expect, it} from 'vitest'

import {
  collateralTags,
  containersUsing,
  filterImageRows,
  imageRows,
  imagesOf,
  listImageRows,
  parseImageFilters,
  planImageRemoval,
  planRemoval,
  removedNames,
  removeImages,
  resolveImage,
  splitRepoTag,
} from '../../../src/lib/images/store.js'
import {sandboxImageFromInfo} from '../../../src/lib/images/sandbox-image.js'
import type {CriClient} from '../../../src/lib/cri/client.js'
import {NotFoundError, RuntimeError} from '../../../src/lib/errors.js'
import type {Container, Image} from '../../../src/generated/runtime/v1/api.js'

const hex = (c: string) => c.repeat(64).slice(0, 64)

function image(idChar: string, repoTags: string[], repoDigests: string[] = [], extra: Partial<Image> = {}): Image {
  const id = `sha256:${hex(idChar)}`
  return {id, repoTags, repoDigests, size: '4190000', uid: undefined, username: '', spec: undefined, pinned: false, ...extra}
}

function ctr(name: string, imageRef: string, state = 'CONTAINER_RUNNING', userSpecifiedImage = ''): Container {
  return {
    id: hex(name[0]),
    podSandboxId: hex('9'),
    metadata: {name, attempt: 0},
    image: {image: imageRef, annotations: {}, userSpecifiedImage, runtimeHandler: '', imageRef: ''},
    imageRef,
    state,
    createdAt: '1',
    labels: {},
    annotations: {},
    imageId: '',
  } as Container
}

const busybox = image(
  'b',
  ['localhost:5000/podctl/busybox:1.36', 'localhost:5000/podctl/busybox:latest'],
  [`localhost:5000/podctl/busybox@sha256:${hex('d')}`],
)
const pause = image('p', ['localhost:5000/podctl/pause:3.9'], [], {pinned: true})
const dangling = image('0', [], [`localhost:5000/old/app@sha256:${hex('1')}`])
const bare = image('1', [])
const hub = image('a', ['docker.io/library/alpine:3.19'], [`docker.io/library/alpine@sha256:${hex('2')}`])
const all = [busybox, pause, dangling, bare, hub]

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

describe('rmi planning', () => {
  const web = ctr('web', busybox.id)
  const exited = ctr('job', 'localhost:5000/podctl/busybox:1.36', 'CONTAINER_EXITED')

  it('finds users by image ID or tag, in any state', () => {
    expect(containersUsing(busybox, [web, exited])).toEqual([web, exited])
    expect(containersUsing(hub, [web, exited])).toEqual([])
  })

  it('refuses an image in use and names the containers', () => {
    const plan = planRemoval(all, [web], {refs: ['localhost:5000/podctl/busybox:1.36']})
    expect(plan.remove).toEqual([])
    expect(plan.failures[0].error.message).toMatch(/is used by container: web \(wwwwwwwwwwwww\); remove them first or pass --force/)
    expect(plan.failures[0].error.code).toBe('ImageInUse')
  })

  it('removes an image in use with force', () => {
    const plan = planRemoval(all, [web], {refs: ['localhost:5000/podctl/busybox:1.36'], force: true})
    expect(plan.remove.map((target) => target.image)).toEqual([busybox])
    expect(plan.failures).toEqual([])
  })

  it('refuses pinned images unless forced', () => {
    expect(planRemoval(all, [], {refs: ['localhost:5000/podctl/pause:3.9']}).failures[0].error.code).toBe('ImagePinned')
    expect(planRemoval(all, [], {refs: ['localhost:5000/podctl/pause:3.9'], force: true}).remove).toHaveLength(1)
  })

  it('deduplicates two names of one image, and keeps going past bad references', () => {
    const plan = planRemoval(all, [], {refs: ['localhost:5000/podctl/busybox:1.36', 'nope:1', 'bbbbbb', 'alpine:3.19']})
    expect(plan.remove.map((target) => [target.image, target.requestedAs])).toEqual([
      [busybox, ['localhost:5000/podctl/busybox:1.36', 'bbbbbb']],
      [hub, ['alpine:3.19']],
    ])
    expect(plan.failures.map((failure) => [failure.ref, failure.error.exitCode])).toEqual([['nope:1', 5]])
  })

  it('prune selects images no container uses that are neither pinned nor the sandbox image', () => {
    const plan = planRemoval(all, [web], {prune: true, protectedRefs: ['alpine:3.19']})
    expect(plan.remove.map((target) => target.image)).toEqual([dangling, bare])
    expect(plan.failures).toEqual([])
  })

  it('--all takes every image but still refuses in-use and pinned ones without force', () => {
    const plan = planRemoval(all, [web], {all: true})
    expect(plan.remove.map((target) => target.image)).toEqual([dangling, bare, hub])
    expect(plan.failures.map((failure) => failure.error.code).sort()).toEqual(['ImageInUse', 'ImagePinned'])
    expect(planRemoval(all, [web], {all: true, force: true}).remove).toHaveLength(5)
  })

  it('says which other tags go when one of several was named', () => {
    const [target] = planRemoval(all, [], {refs: ['localhost:5000/podctl/busybox:latest']}).remove
    expect(collateralTags(target)).toEqual(['localhost:5000/podctl/busybox:1.36'])
    const [byId] = planRemoval(all, [], {refs: ['bbbb']}).remove
    expect(collateralTags(byId)).toEqual([])
  })

  it('prints every tag, else digests, else the ID', () => {
    expect(removedNames(busybox)).toEqual(busybox.repoTags)
    expect(removedNames(dangling)).toEqual(dangling.repoDigests)
    expect(removedNames(bare)).toEqual([bare.id])
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

/** A client answering the image store's calls from fixed lists, recording each call. */
function storeClient(options: {images: Image[]; containers?: Container[]; status?: () => unknown; remove?: (id: string) => unknown}) {
  const calls: string[] = []
  const answer = async (method: string, request: {image?: {image: string}}) => {
    calls.push(method)
    if (method === 'listImages') return {images: options.images}
    if (method === 'listContainers') return {containers: options.containers ?? []}
    if (method === 'status') return options.status ? options.status() : {info: {}}
    if (method === 'removeImage') return options.remove ? options.remove(request.image!.image) : {}
    throw new Error(`unexpected ${method}`)
  }

  return {client: {runtime: answer, image: answer} as unknown as CriClient, calls}
}

describe('the store calls (commands never name the RPCs)', () => {
  it('listImageRows: one ListImages, rows filtered', async () => {
    const {client, calls} = storeClient({images: all})
    const rows = await listImageRows(client, parseImageFilters(['dangling=true']))
    expect(calls).toEqual(['listImages'])
    expect(imagesOf(rows)).toEqual([dangling, bare])
  })

  it('planImageRemoval protects the sandbox image the runtime reports, and plans without it when Status fails', async () => {
    const unpinnedPause = {...pause, pinned: false}
    const config = JSON.stringify({sandboxImage: 'localhost:5000/podctl/pause:3.9'})
    const {client, calls} = storeClient({images: [busybox, unpinnedPause], status: () => ({info: {config}})})
    const plan = await planImageRemoval(client, {prune: true})
    expect([...calls].sort()).toEqual(['listContainers', 'listImages', 'status'])
    expect(plan.remove.map((target) => target.image)).toEqual([busybox])

    const failing = storeClient({images: [busybox, unpinnedPause], status: () => Promise.reject(new RuntimeError('no status'))})
    expect((await planImageRemoval(failing.client, {prune: true})).remove.map((target) => target.image)).toEqual([busybox, unpinnedPause])
  })

  it('removeImages: every planned image, failures kept with their target, in plan order', async () => {
    const plan = planRemoval([busybox, hub], [], {all: true})
    const gone = new NotFoundError('image gone')
    const {client, calls} = storeClient({images: [], remove: (id) => (id === hub.id ? Promise.reject(gone) : {})})
    const outcomes = await removeImages(client, plan)
    expect(calls).toEqual(['removeImage', 'removeImage'])
    expect(outcomes).toEqual([
      {target: plan.remove[0], removed: true},
      {target: plan.remove[1], removed: false, error: gone},
    ])
  })
})
