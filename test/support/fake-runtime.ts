import {spawnSync} from 'node:child_process'
import {mkdtempSync} from 'node:fs'
import {createServer, type Server as NetServer, type Socket} from 'node:net'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import * as grpc from '@grpc/grpc-js'

import * as api from '../../src/generated/runtime/v1/api.js'
import {ImageServiceService, RuntimeServiceService} from '../../src/generated/runtime/v1/api.js'

/**
 * In-process gRPC runtimes on unix sockets, for error paths a real containerd will not produce on
 * demand (hangs, UNIMPLEMENTED, UNAVAILABLE). Never the only proof: the e2e suite uses the lab.
 */
export function socketDir(): string {
  return mkdtempSync(join(tmpdir(), 'podctl-fake-'))
}

type Handlers = Partial<Record<keyof typeof RuntimeServiceService, grpc.handleUnaryCall<any, any>>>
type ImageHandlers = Partial<Record<keyof typeof ImageServiceService, grpc.handleUnaryCall<any, any>>>

export async function startFakeRuntime(path: string, handlers: Handlers, imageHandlers: ImageHandlers = {}): Promise<() => Promise<void>> {
  const server = new grpc.Server()
  server.addService(lenient(RuntimeServiceService), handlers as grpc.UntypedServiceImplementation)
  server.addService(lenient(ImageServiceService), imageHandlers as grpc.UntypedServiceImplementation)
  await new Promise<void>((resolve, reject) => {
    server.bindAsync(`unix://${path}`, grpc.ServerCredentials.createInsecure(), (error) => (error ? reject(error) : resolve()))
  })
  return () =>
    new Promise<void>((resolve) => {
      server.tryShutdown(() => resolve())
    })
}

/** Lets handlers answer with partial objects, filled with proto3 defaults like a real server's. */
function lenient(service: object): grpc.ServiceDefinition {
  const out: Record<string, unknown> = {}
  for (const [name, def] of Object.entries(service as Record<string, {path: string; responseSerialize: (v: unknown) => Buffer}>)) {
    const rpc = def.path.slice(def.path.lastIndexOf('/') + 1)
    const types = api as unknown as Record<string, {fromPartial(v: unknown): unknown}>
    // GetContainerEvents streams ContainerEventResponse: not every response type is named after its RPC.
    const type = types[`${rpc}Response`] ?? types[rpc.replace(/^Get(Container)Events$/, '$1EventResponse')]
    out[name] = {...def, responseSerialize: (value: unknown) => def.responseSerialize(type.fromPartial(value))}
  }

  return out as grpc.ServiceDefinition
}

export const versionHandler: grpc.handleUnaryCall<any, any> = (_call, callback) =>
  callback(null, {version: '0.1.0', runtimeName: 'fake', runtimeVersion: '1.0', runtimeApiVersion: 'v1'})

/** A runtime with no pods and no containers: for what a command refuses or sets up before it touches one. */
export function startEmptyRuntime(path: string): Promise<() => Promise<void>> {
  return startFakeRuntime(path, {
    version: versionHandler,
    listPodSandbox: (_call, callback) => callback(null, {items: []}),
    listContainers: (_call, callback) => callback(null, {containers: []}),
  })
}

export function failWith(code: grpc.status, details: string): grpc.handleUnaryCall<any, any> {
  return (_call, callback) => callback({code, details, name: 'Error', message: details}, null)
}

/** Accepts calls and never answers them. */
export const neverAnswer: grpc.handleUnaryCall<any, any> = () => {}

/** A socket that accepts connections and never speaks (a wedged runtime). */
export async function startSilentSocket(path: string): Promise<() => Promise<void>> {
  const sockets: Socket[] = []
  const server: NetServer = createServer((socket) => sockets.push(socket))
  await new Promise<void>((resolve) => {
    server.listen(path, resolve)
  })
  return () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy()
      server.close(() => resolve())
    })
}

/** A socket file left behind by a runtime that died: connecting is refused. */
export function makeStaleSocket(path: string): void {
  const script = `require('net').createServer().listen(${JSON.stringify(path)}, () => process.exit(0))`
  spawnSync(process.execPath, ['-e', script])
}
