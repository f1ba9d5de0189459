/**
 * How CRI answers are read: through the generated types with a reader that takes strings straight
 * from the gRPC Buffer, or, for summaries, only counted (count-states.ts). Loaded with grpc-js and
 * the generated code, by the commands that call the runtime.
 */
import type * as api from '../../generated/runtime/v1/api.js'
import {BufferReader} from './buffer-reader.js'
import {type ContainerColumns, readContainerColumns} from './container-columns.js'
import {countStates, type StateCounts} from './count-states.js'
import {type ContainerKindKeys, countCurrentContainers, type GroupCount} from './current-containers.js'
import {decodeContainerSummaries, decodeSandboxSummaries} from './summaries.js'

type ApiModule = typeof api

/** The shape grpc-js needs from one generated method definition. */
export interface MethodDef {
  path: string
  requestSerialize: (value: never) => Buffer
  responseDeserialize: (value: Buffer) => unknown
}

/** Where the state is in a Container and a PodSandbox message (CRI v1: `state = 6`, `state = 3`). */
const CONTAINER_STATE_FIELD = 6
const SANDBOX_STATE_FIELD = 3

type Decoder = {decode(reader: BufferReader): unknown}

/** The response decoder of an RPC: its generated type read through BufferReader, else the definition's own. */
export function responseDecoder(generated: ApiModule, rpcName: string, def: MethodDef): (buffer: Buffer) => unknown {
  const type = (generated as unknown as Record<string, Decoder | undefined>)[`${rpcName}Response`]
  return type ? (buffer: Buffer) => type.decode(new BufferReader(buffer)) : (def.responseDeserialize as (buffer: Buffer) => unknown)
}

/** ListPodSandbox's or ListContainers' answer decoded for a table (summaries.ts): what no listing shows is skipped. */
export function summaryDecoder(generated: ApiModule, method: 'listContainers' | 'listPodSandbox'): (buffer: Buffer) => unknown {
  const names = {sandbox: generated.podSandboxStateFromJSON, container: generated.containerStateFromJSON}
  return method === 'listContainers'
    ? (buffer) => decodeContainerSummaries(buffer, names)
    : (buffer) => decodeSandboxSummaries(buffer, names)
}

/** ListContainers' answer as columns, with the summaries of the same bytes for whoever needs objects. */
export interface ContainerListing {
  columns: ContainerColumns
  /** The state enum's name of a number, as the generated decoder maps it. */
  stateName: (value: number) => api.ContainerState
  /** Every container as decodeContainerSummaries reads it, in the message's order; decoded on the first call. */
  containers: () => api.Container[]
}

export function containerListing(generated: ApiModule, bytes: Buffer, labelKeys: readonly string[]): ContainerListing {
  const columns = readContainerColumns(bytes, labelKeys)
  let containers: api.Container[] | undefined
  const names = {sandbox: generated.podSandboxStateFromJSON, container: generated.containerStateFromJSON}
  return {
    columns,
    stateName: generated.containerStateFromJSON,
    containers: () => (containers ??= decodeContainerSummaries(bytes, names).containers),
  }
}

/** ListContainers' or ListPodSandbox's answer counted by state. */
export function stateCounter(generated: ApiModule, method: 'listContainers' | 'listPodSandbox'): (buffer: Buffer) => StateCounts {
  const state =
    method === 'listContainers'
      ? {field: CONTAINER_STATE_FIELD, name: generated.containerStateFromJSON}
      : {field: SANDBOX_STATE_FIELD, name: generated.podSandboxStateFromJSON}
  return (buffer) => countStates(buffer, state)
}

/**
 * ListContainers' answer counted by sandbox (pod_sandbox_id) as kubectl's READY counts a pod: its
 * current containers (newest attempt of each, init containers left out, sidecars in), and those running.
 */
export function runningBySandboxCounter(generated: ApiModule, keys: ContainerKindKeys): (buffer: Buffer) => Map<string, GroupCount> {
  const running = generated.containerStateToNumber(generated.ContainerState.CONTAINER_RUNNING)
  return (buffer) => countCurrentContainers(buffer, running, keys)
}

/** How many items a List answer holds. */
export function itemCounter(buffer: Buffer): number {
  return countStates(buffer).total
}
