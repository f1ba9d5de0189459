/**
 * Images and containers as ListImages and ListContainers answer them, for the image store's and the
 * removal plan's unit tests, and a client answering those calls from fixed lists.
 */
import type {CriClient} from '../../src/lib/cri/client.js'
import type {Container, Image} from '../../src/generated/runtime/v1/api.js'

export const hex = (c: string) => c.repeat(64).slice(0, 64)

export function image(idChar: string, repoTags: string[], repoDigests: string[] = [], extra: Partial<Image> = {}): Image {
  const id = `sha256:${hex(idChar)}`
  return {id, repoTags, repoDigests, size: '4190000', uid: undefined, username: '', spec: undefined, pinned: false, ...extra}
}

export function ctr(name: string, imageRef: string, state = 'CONTAINER_RUNNING', userSpecifiedImage = ''): Container {
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

export const busybox = image(
  'b',
  ['localhost:5000/podctl/busybox:1.36', 'localhost:5000/podctl/busybox:latest'],
  [`localhost:5000/podctl/busybox@sha256:${hex('d')}`],
)
export const pause = image('p', ['localhost:5000/podctl/pause:3.9'], [], {pinned: true})
export const dangling = image('0', [], [`localhost:5000/old/app@sha256:${hex('1')}`])
export const bare = image('1', [])
export const hub = image('a', ['docker.io/library/alpine:3.19'], [`docker.io/library/alpine@sha256:${hex('2')}`])
export const all = [busybox, pause, dangling, bare, hub]

/** A client answering the image store's calls from fixed lists, recording each call. */
export function storeClient(options: {
  images: Image[]
  containers?: Container[]
  status?: () => unknown
  remove?: (id: string) => unknown
}) {
  const calls: string[] = []
  const answer = async (method: string, request: {image?: {image: string}}) => {
    calls.push(method)
    if (method === 'listImages') return {images: options.images}
    if (method === 'listContainers') return {containers: options.containers ?? []}
    if (method === 'status') return options.status ? options.status() : {info: {}}
    if (method === 'removeImage') return options.remove ? options.remove(request.image!.image) : {}
    throw new Error(`unexpected ${method}`)
  }

  return {client: {runtime: answer, image: answer, runtimeEndpoint: 'unix:///run/fake/containerd.sock'} as unknown as CriClient, calls}
}
