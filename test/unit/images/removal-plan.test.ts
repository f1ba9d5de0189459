/**
 * What `rmi` removes and why: refusals of images in use or pinned, --all and --prune, and as podctl
 * (not as crictl) --all and --prune limited to the images podctl pulled on this runtime.
 */
import {describe, expect, it} from 'vitest'

import {NotFoundError, RuntimeError} from '../../../src/lib/errors.js'
import type {PullRecord} from '../../../src/lib/images/pull-records.js'
import {
  collateralTags,
  containersUsing,
  planImageRemoval,
  planRemoval,
  removedNames,
  removeImages,
} from '../../../src/lib/images/removal-plan.js'
import {all, bare, busybox, ctr, dangling, hub, pause, storeClient} from '../../support/image-fixtures.js'

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

describe('the removal calls (commands never name the RPCs)', () => {
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

describe('rmi --all and --prune as podctl: only the images podctl pulled on this runtime', () => {
  const pulled = (id: string, imageRef = id): PullRecord => ({imageId: id, imageRef, image: '', pulledMs: 0})

  it('prune takes the unused images podctl pulled and counts the others it leaves alone', () => {
    const plan = planRemoval(all, [], {prune: true, onlyPulledBy: [pulled(bare.id), pulled('elsewhere', hub.repoDigests[0])]})
    expect(plan.remove.map((target) => target.image)).toEqual([bare, hub])
    // busybox and dangling: unused, unpinned, pulled by someone else (pause is pinned, so never a candidate).
    expect(plan.leftAlone).toBe(2)
    expect(planRemoval(all, [], {prune: true, onlyPulledBy: []}).remove).toEqual([])
  })

  it('--all takes only podctl pulls; a named image is the user’s call', () => {
    const plan = planRemoval(all, [], {all: true, onlyPulledBy: [pulled(hub.id)]})
    expect(plan.remove.map((target) => target.image)).toEqual([hub])
    expect(plan.leftAlone).toBe(4)
    expect(planRemoval(all, [], {refs: ['bbbbbb'], onlyPulledBy: []}).remove.map((target) => target.image)).toEqual([busybox])
  })

  it('reads the pull records under the root it is given; without one (crictl rmi) every image is a candidate', async () => {
    const {client} = storeClient({images: [busybox, dangling]})
    const root = '/nonexistent/podctl-pulls'
    const plan = await planImageRemoval(client, {prune: true}, {pullRecordsIn: root})
    expect(plan.remove).toEqual([])
    expect(plan.leftAlone).toBe(2)
    expect((await planImageRemoval(client, {prune: true})).remove).toHaveLength(2)
  })
})
