import {mkdtemp, rm} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import * as grpc from '@grpc/grpc-js'

import {ContentService, type Status} from '../../src/generated/containerd/services/content/v1/content.js'
import {type Image, ImageServiceService, type ImageStatusRequest, type PullImageRequest} from '../../src/generated/runtime/v1/api.js'

export type FakeCall =
  {method: 'imageStatus'; request: ImageStatusRequest; at: number} | {method: 'pullImage'; request: PullImageRequest; at: number}

/** What a handler answers: a value, or a gRPC failure the way containerd would send it. */
export type FakeAnswer<T> = T | {grpcError: {code: grpc.status; details: string}}

export interface FakeImageServiceHandlers {
  imageStatus?: (request: ImageStatusRequest) => Promise<FakeAnswer<Image | undefined>> | FakeAnswer<Image | undefined>
  pullImage?: (request: PullImageRequest) => Promise<FakeAnswer<string>> | FakeAnswer<string>
  /**
   * containerd's Content/ListStatuses on the same socket, given the namespace header of the call (the
   * service is there only when the fake is started with `{content: true}`, as on containerd; else UNIMPLEMENTED as on CRI-O).
   */
  listStatuses?: (namespace: string | undefined) => Promise<FakeAnswer<Status[]>> | FakeAnswer<Status[]>
}

/**
 * An in-process CRI ImageService on a unix socket, speaking the real wire protocol through
 * grpc-js, so the image manager's retries, back-off and error mapping are tested end to end
 * through CriClient without a runtime. Records every call.
 */
export class FakeImageService {
  readonly calls: FakeCall[] = []
  /** The namespace header of each Content/ListStatuses call, in order. */
  readonly contentCalls: Array<string | undefined> = []
  endpoint = ''
  private server?: grpc.Server
  private dir = ''

  constructor(public handlers: FakeImageServiceHandlers = {}) {}

  async start(options: {content?: boolean} = {}): Promise<this> {
    this.dir = await mkdtemp(join(tmpdir(), 'podctl-fake-cri-'))
    this.endpoint = `unix://${join(this.dir, 'cri.sock')}`
    const server = new grpc.Server()
    const answer = <T>(value: FakeAnswer<T>, callback: grpc.sendUnaryData<T>, wrap: (v: T) => unknown) => {
      if (value && typeof value === 'object' && 'grpcError' in value) {
        callback({code: value.grpcError.code, details: value.grpcError.details, name: 'fake', message: value.grpcError.details})
      } else callback(null, wrap(value as T) as T)
    }

    server.addService(ImageServiceService, {
      imageStatus: async (call: grpc.ServerUnaryCall<ImageStatusRequest, unknown>, callback: grpc.sendUnaryData<unknown>) => {
        this.calls.push({method: 'imageStatus', request: call.request, at: Date.now()})
        const result = await (this.handlers.imageStatus ?? (() => undefined))(call.request)
        answer(result, callback as grpc.sendUnaryData<Image | undefined>, (image) => ({image, info: {}}))
      },
      pullImage: async (call: grpc.ServerUnaryCall<PullImageRequest, unknown>, callback: grpc.sendUnaryData<unknown>) => {
        this.calls.push({method: 'pullImage', request: call.request, at: Date.now()})
        const result = await (this.handlers.pullImage ?? (() => 'sha256:fake'))(call.request)
        answer(result, callback as grpc.sendUnaryData<string>, (imageRef) => ({imageRef}))
      },
      listImages: (_call: unknown, callback: grpc.sendUnaryData<unknown>) => callback(null, {images: []}),
      removeImage: (_call: unknown, callback: grpc.sendUnaryData<unknown>) => callback(null, {}),
      imageFsInfo: (_call: unknown, callback: grpc.sendUnaryData<unknown>) =>
        callback(null, {imageFilesystems: [], containerFilesystems: []}),
    } as unknown as grpc.UntypedServiceImplementation)
    if (options.content) {
      server.addService(ContentService, {
        listStatuses: async (call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) => {
          const namespace = call.metadata.get('containerd-namespace')[0]?.toString()
          this.contentCalls.push(namespace)
          const result = await (this.handlers.listStatuses ?? (() => []))(namespace)
          answer(result, callback as grpc.sendUnaryData<Status[]>, (statuses) => ({statuses}))
        },
      } as unknown as grpc.UntypedServiceImplementation)
    }

    await new Promise<void>((resolve, reject) => {
      server.bindAsync(this.endpoint, grpc.ServerCredentials.createInsecure(), (error) => (error ? reject(error) : resolve()))
    })
    this.server = server
    return this
  }

  methods(): string[] {
    return this.calls.map((call) => call.method)
  }

  pulls(): PullImageRequest[] {
    return this.calls.flatMap((call) => (call.method === 'pullImage' ? [call.request] : []))
  }

  reset(handlers: FakeImageServiceHandlers = {}): void {
    this.calls.length = 0
    this.contentCalls.length = 0
    this.handlers = handlers
  }

  async stop(): Promise<void> {
    this.server?.forceShutdown()
    await rm(this.dir, {recursive: true, force: true})
  }
}

/** An Image as ImageStatus returns it. */
export function fakeImage(id: string, size = '1234'): Image {
  return {id, repoTags: [], repoDigests: [], size, uid: undefined, username: '', spec: undefined, pinned: false}
}
