import {describe, expect, it} from 'vitest'

import {AmbiguousError, NotFoundError} from '../../../src/lib/errors.js'
import {checkContainerRefs, containersLeftAloneNote, matchContainers} from '../../../src/lib/node/resolve-containers.js'
import type {Container, PodSandbox} from '../../../src/generated/runtime/v1/api.js'

const sandbox = (id: string, name: string, namespace: string): PodSandbox =>
  ({
    id,
    metadata: {name, namespace, uid: id, attempt: 0},
    state: 'SANDBOX_READY',
    createdAt: '1',
    labels: {},
    annotations: {},
    runtimeHandler: '',
  }) as PodSandbox

const container = (id: string, podSandboxId: string, name: string, state: string, createdAt: string): Container =>
  ({
    id,
    podSandboxId,
    metadata: {name, attempt: 0},
    state,
    createdAt,
    labels: {},
    annotations: {},
    imageRef: '',
    imageId: '',
  }) as unknown as Container

const sandboxes = [sandbox('s1', 'web', 'default'), sandbox('s2', 'web', 'shop')]
const containers = [
  container('aa11', 's1', 'app', 'CONTAINER_RUNNING', '1'),
  container('aa22', 's1', 'debug', 'CONTAINER_CREATED', '2'),
  container('bb11', 's2', 'app', 'CONTAINER_EXITED', '3'),
]

describe('matchContainers', () => {
  it('resolves ID prefixes and POD/CONTAINER in the order named, each once; failures apart', () => {
    const {containers: found, failures} = matchContainers(containers, sandboxes, {refs: ['web/debug', 'bb', 'aa', 'ghost', 'aa22']})
    expect(found.map((c) => c.id)).toEqual(['aa22', 'bb11'])
    expect(failures.map(({ref, error}) => [ref, error.constructor])).toEqual([
      ['aa', AmbiguousError],
      ['ghost', NotFoundError],
    ])
    expect(matchContainers(containers, sandboxes, {refs: ['web/app'], namespace: 'shop'}).containers.map((c) => c.id)).toEqual(['bb11'])
  })

  it('--all: every container, newest first, by state and namespace', () => {
    const all = (options: object) => matchContainers(containers, sandboxes, {refs: [], all: true, ...options}).containers.map((c) => c.id)
    expect(all({})).toEqual(['bb11', 'aa22', 'aa11'])
    expect(all({states: ['CONTAINER_RUNNING']})).toEqual(['aa11'])
    expect(all({namespace: 'shop'})).toEqual(['bb11'])
  })

  it('refuses refs with --all, and neither', () => {
    expect(() => checkContainerRefs({refs: ['a'], all: true})).toThrow('give either CONTAINER references or --all, not both')
    expect(() => checkContainerRefs({refs: []})).toThrow(/^no containers given/)
  })
})

describe('matchContainers: --all only for the containers podctl made (rm -a, stop -a as podctl)', () => {
  const made = (one: Container): Container => ({
    ...one,
    labels: {'io.kubernetes.pod.uid': 'u', 'io.kubernetes.container.name': one.metadata?.name ?? ''},
    annotations: {'io.podctl.containerType': 'app'},
  })
  const mixed = [made(containers[0]), containers[1], made(containers[2])]

  it("chooses podctl's and counts the others; as crictl, every one", () => {
    const ours = matchContainers(mixed, sandboxes, {refs: [], all: true, onlyPodctl: true})
    expect(ours.containers.map((one) => one.id)).toEqual(['bb11', 'aa11'])
    expect(ours.leftAlone).toBe(1)
    const every = matchContainers(mixed, sandboxes, {refs: [], all: true})
    expect(every.containers).toHaveLength(3)
    expect(every.leftAlone).toBeUndefined()
    expect(containersLeftAloneNote(1, 'remove')).toBe('left alone 1 container podctl did not make; name a container to remove it')
  })

  it('a container named by reference is chosen whatever made it', () => {
    expect(matchContainers(mixed, sandboxes, {refs: ['aa22'], onlyPodctl: true}).containers.map((one) => one.id)).toEqual(['aa22'])
  })
})
