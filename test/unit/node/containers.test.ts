import {describe, expect, it} from 'vitest'

import {
  containerRefName,
  imageName,
  imageTagsById,
  selectContainers,
  stateLabel,
  stateToRequest,
  truncateDigest,
} from '../../../src/lib/node/containers.js'
import {matchContainerRef} from '../../../src/lib/node/resolve.js'
import type {Container, Image, PodSandbox} from '../../../src/generated/runtime/v1/api.js'

const hex = (c: string) => c.repeat(64).slice(0, 64)

function pod(id: string, name: string, namespace: string, createdAt = '1'): PodSandbox {
  return {
    id,
    metadata: {name, namespace, uid: `uid-${name}`, attempt: 0},
    state: 'SANDBOX_READY',
    createdAt,
    labels: {},
    annotations: {},
    runtimeHandler: '',
  } as PodSandbox
}

function ctr(id: string, name: string, podId: string, state: string, createdAt: string, extra: Partial<Container> = {}): Container {
  return {
    id,
    podSandboxId: podId,
    metadata: {name, attempt: 0},
    image: {
      image: 'sha256:' + hex('e'),
      annotations: {},
      userSpecifiedImage: 'localhost:5000/podctl/busybox:1.36',
      runtimeHandler: '',
      imageRef: '',
    },
    imageRef: 'sha256:' + hex('e'),
    state,
    createdAt,
    labels: {},
    annotations: {},
    imageId: '',
    ...extra,
  } as Container
}

const sandboxes = [pod(hex('a'), 'web', 'shop', '10'), pod(hex('b'), 'db', 'shop', '20'), pod(hex('c'), 'web', 'other', '30')]
const containers = [
  ctr(hex('1'), 'web', hex('a'), 'CONTAINER_RUNNING', '100'),
  ctr(hex('2'), 'web2', hex('a'), 'CONTAINER_RUNNING', '300'),
  ctr(hex('3'), 'sidecar', hex('a'), 'CONTAINER_EXITED', '200'),
  ctr(hex('4'), 'postgres', hex('b'), 'CONTAINER_CREATED', '400', {
    image: {image: 'sha256:' + hex('f'), annotations: {}, userSpecifiedImage: '', runtimeHandler: '', imageRef: ''},
    imageRef: 'sha256:' + hex('f'),
  }),
  ctr(hex('5'), 'web', hex('c'), 'CONTAINER_RUNNING', '500'),
]
const ids = (entries: ReturnType<typeof selectContainers>) => entries.map((entry) => entry.container.id[0])

describe('stateToRequest', () => {
  it('asks the runtime for running containers by default', () => {
    expect(stateToRequest({})).toBe('CONTAINER_RUNNING')
  })

  it('asks for every state with --all, --latest or --last', () => {
    expect(stateToRequest({all: true})).toBeUndefined()
    expect(stateToRequest({latest: true})).toBeUndefined()
    expect(stateToRequest({last: 2})).toBeUndefined()
  })

  it('lets --state win over --all', () => {
    expect(stateToRequest({all: true, state: 'exited'})).toBe('CONTAINER_EXITED')
    expect(stateToRequest({state: 'created'})).toBe('CONTAINER_CREATED')
    expect(stateToRequest({state: 'unknown'})).toBe('CONTAINER_UNKNOWN')
  })
})

describe('selectContainers', () => {
  it('lists running containers newest first by default', () => {
    expect(ids(selectContainers(containers, sandboxes, {}))).toEqual(['5', '2', '1'])
  })

  it('lists every state with all', () => {
    expect(ids(selectContainers(containers, sandboxes, {all: true}))).toEqual(['5', '4', '2', '3', '1'])
  })

  it('matches --name exactly: web never matches web2', () => {
    expect(ids(selectContainers(containers, sandboxes, {all: true, name: 'web'}))).toEqual(['5', '1'])
  })

  it('matches --name globs anchored at both ends', () => {
    expect(ids(selectContainers(containers, sandboxes, {all: true, name: 'web*'}))).toEqual(['5', '2', '1'])
    expect(ids(selectContainers(containers, sandboxes, {all: true, name: '*car'}))).toEqual(['3'])
    expect(ids(selectContainers(containers, sandboxes, {all: true, name: 'eb'}))).toEqual([])
  })

  it('filters by namespace from the sandbox, exact or glob', () => {
    expect(ids(selectContainers(containers, sandboxes, {all: true, namespace: 'shop'}))).toEqual(['4', '2', '3', '1'])
    expect(ids(selectContainers(containers, sandboxes, {all: true, namespace: 'sho'}))).toEqual([])
    expect(ids(selectContainers(containers, sandboxes, {all: true, namespace: 'o*'}))).toEqual(['5'])
  })

  it('resolves --pod as a name in --namespace, as name_namespace, or as a sandbox ID prefix', () => {
    expect(ids(selectContainers(containers, sandboxes, {all: true, pod: 'web', namespace: 'shop'}))).toEqual(['2', '3', '1'])
    expect(ids(selectContainers(containers, sandboxes, {all: true, pod: 'web_other'}))).toEqual(['5'])
    expect(ids(selectContainers(containers, sandboxes, {all: true, pod: 'bbb'}))).toEqual(['4'])
  })

  it('fails on an unknown pod instead of listing nothing', () => {
    expect(() => selectContainers(containers, sandboxes, {pod: 'web'})).toThrow(/pod "web" not found/)
    expect(() => selectContainers(containers, sandboxes, {pod: 'nope', namespace: 'shop'})).toThrow(expect.objectContaining({exitCode: 5}))
  })

  it('refuses --pod with a glob namespace', () => {
    expect(() => selectContainers(containers, sandboxes, {pod: 'web', namespace: 's*'})).toThrow(expect.objectContaining({exitCode: 2}))
  })

  it('matches --image against the user-specified image and the image ref', () => {
    expect(ids(selectContainers(containers, sandboxes, {all: true, image: 'localhost:5000/podctl/busybox:1.36'}))).toEqual([
      '5',
      '2',
      '3',
      '1',
    ])
    expect(ids(selectContainers(containers, sandboxes, {all: true, image: 'sha256:' + hex('f')}))).toEqual(['4'])
    expect(ids(selectContainers(containers, sandboxes, {all: true, image: '*busybox*'}))).toEqual(['5', '2', '3', '1'])
    expect(ids(selectContainers(containers, sandboxes, {all: true, image: 'busybox'}))).toEqual([])
  })

  it('matches --image against the tags of the image a container was created from by ID', () => {
    const images = [{id: 'sha256:' + hex('f'), repoTags: ['postgres:16'], repoDigests: []} as unknown as Image]
    expect(ids(selectContainers(containers, sandboxes, {all: true, image: 'postgres:16'}, images))).toEqual(['4'])
    expect(ids(selectContainers(containers, sandboxes, {all: true, image: 'postgres*'}, images))).toEqual(['4'])
    expect(ids(selectContainers(containers, sandboxes, {all: true, image: 'postgres:16'}))).toEqual([])
  })

  it('filters by ID prefix and state', () => {
    expect(ids(selectContainers(containers, sandboxes, {all: true, id: '33'}))).toEqual(['3'])
    expect(ids(selectContainers(containers, sandboxes, {state: 'exited'}))).toEqual(['3'])
  })

  it('keeps the newest with --latest and --last, across states', () => {
    expect(ids(selectContainers(containers, sandboxes, {latest: true}))).toEqual(['5'])
    expect(ids(selectContainers(containers, sandboxes, {last: 3, namespace: 'shop'}))).toEqual(['4', '2', '3'])
  })

  it('takes pod name and namespace from the sandbox, else from the kubelet labels', () => {
    const orphan = ctr(hex('9'), 'lost', hex('d'), 'CONTAINER_EXITED', '50', {
      labels: {'io.kubernetes.pod.name': 'gone', 'io.kubernetes.pod.namespace': 'shop'},
    })
    const [entry] = selectContainers([orphan], sandboxes, {all: true})
    expect([entry.podName, entry.podNamespace, entry.sandbox]).toEqual(['gone', 'shop', undefined])
    expect(containerRefName(entry)).toBe('gone_shop/lost')
  })
})

describe('column helpers', () => {
  it('names the image as the user gave it, else by a tag of the image ID, else by the ID', () => {
    expect(imageName(containers[0])).toBe('localhost:5000/podctl/busybox:1.36')
    expect(imageName(containers[3])).toBe('sha256:' + hex('f'))
    const tags = imageTagsById([
      {id: 'sha256:' + hex('f'), repoTags: ['postgres:16', 'postgres:latest'], repoDigests: []} as unknown as Image,
    ])
    expect(imageName(containers[3], tags)).toBe('postgres:16')
    const [entry] = selectContainers(containers, sandboxes, {all: true, id: '4'}, [
      {id: 'sha256:' + hex('f'), repoTags: [], repoDigests: ['postgres@sha256:' + hex('0')]} as unknown as Image,
    ])
    expect(entry.imageName).toBe('postgres@sha256:' + hex('0'))
  })

  it("names a CRI-O container (image ID of 64 bare hex digits, no user-specified image) by its image's tag", () => {
    // CRI-O's ListContainers: image.image and imageRef are the ID without "sha256:"; ListImages' IDs alike.
    const crio = ctr(hex('6'), 'app', hex('a'), 'CONTAINER_RUNNING', '600', {
      image: {image: hex('d'), annotations: {}, userSpecifiedImage: '', runtimeHandler: '', imageRef: ''},
      imageRef: hex('d'),
    })
    const tags = imageTagsById([{id: hex('d'), repoTags: ['localhost:5000/podctl/busybox:1.36'], repoDigests: []} as unknown as Image])
    expect(imageName(crio, tags)).toBe('localhost:5000/podctl/busybox:1.36')
    // Without the image listed: the ID, shortened as a digest is.
    expect(truncateDigest(imageName(crio))).toBe('ddddddddddddd')
    // 64 hex digits only: a name that happens to be hex-like stays whole.
    expect(truncateDigest('cafe')).toBe('cafe')
  })

  it('truncates only digests, never names or repo@digest references', () => {
    expect(truncateDigest('sha256:' + hex('0'))).toBe('0000000000000')
    expect(truncateDigest('busybox:latest')).toBe('busybox:latest')
    expect(truncateDigest('busybox@sha256:' + hex('0'))).toBe('busybox@sha256:' + hex('0'))
  })

  it('names states like crictl', () => {
    expect(['CONTAINER_CREATED', 'CONTAINER_RUNNING', 'CONTAINER_EXITED', 'CONTAINER_UNKNOWN', 'UNRECOGNIZED'].map(stateLabel)).toEqual([
      'Created',
      'Running',
      'Exited',
      'Unknown',
      'Unknown',
    ])
  })

  it('names containers name_namespace/container, which matchContainerRef resolves back', () => {
    const [entry] = selectContainers(containers, sandboxes, {all: true, id: '3'})
    const name = containerRefName(entry)
    expect(name).toBe('web_shop/sidecar')
    expect(matchContainerRef(containers, sandboxes, name).id).toBe(hex('3'))
  })
})

describe('matchContainerRef', () => {
  it('names the namespaces a pod of that name is in when it is not in the one asked for', () => {
    expect(() => matchContainerRef(containers, sandboxes, 'db/server')).toThrow(
      'pod "db" not found in namespace default; it exists in shop: add -n shop',
    )
    expect(() => matchContainerRef(containers, sandboxes, 'web/server', {namespace: 'prod'})).toThrow(
      'pod "web" not found in namespace prod; it exists in other, shop: add -n NAMESPACE',
    )
    expect(() => matchContainerRef(containers, sandboxes, 'ghost/server')).toThrow('pod "ghost" not found; list pods with: podctl pods')
  })

  it('takes the newest attempt of POD/CONTAINER in the namespace', () => {
    expect(matchContainerRef(containers, sandboxes, 'web/web', {namespace: 'shop'}).id).toBe(hex('1'))
    expect(matchContainerRef(containers, sandboxes, 'web/web', {namespace: 'other'}).id).toBe(hex('5'))
  })

  it('says which pod lacks the container', () => {
    expect(() => matchContainerRef(containers, sandboxes, 'web_shop/nope')).toThrow(/pod "web_shop" has no container named "nope"/)
  })

  it('falls back to ID prefixes, with ambiguity listed', () => {
    const twins = [
      ctr('abc1' + hex('0').slice(4), 'x', hex('a'), 'CONTAINER_RUNNING', '1'),
      ctr('abc2' + hex('0').slice(4), 'y', hex('a'), 'CONTAINER_RUNNING', '2'),
    ]
    expect(() => matchContainerRef(twins, sandboxes, 'abc')).toThrow(expect.objectContaining({exitCode: 15}))
    expect(matchContainerRef(twins, sandboxes, 'abc2').metadata?.name).toBe('y')
  })
})
