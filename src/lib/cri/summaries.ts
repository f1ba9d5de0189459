/**
 * ListPodSandbox and ListContainers decoded for tables and names: the fields a listing shows, with
 * the rest stepped over unread. Annotations are most of a kubelet pod's bytes (a pod's config
 * source and seen-time, a container's hash, termination-message settings, ...), and a sandbox's labels
 * are matched by the runtime, so neither is needed to print a row. The objects have the generated
 * types' shape with those maps left empty; JSON, YAML, templates and -v decode the whole answer.
 */
import {WireType} from '@bufbuild/protobuf/wire'

import type {
  Container,
  ContainerMetadata,
  ContainerState,
  ImageSpec,
  ListContainersResponse,
  ListPodSandboxResponse,
  PodSandbox,
  PodSandboxMetadata,
  PodSandboxState,
} from '../../generated/runtime/v1/api.js'
import {BufferReader} from './buffer-reader.js'

/**
 * The maps left unread: one frozen empty object for all of them, not three new ones per container
 * (at 5000 pods, 25 000 objects fewer for every scavenge to copy).
 */
const SKIPPED: Record<string, string> = Object.freeze({})

/** Each enum value's name, as the generated decoders map them. */
export interface StateNames {
  sandbox: (value: number) => PodSandboxState
  container: (value: number) => ContainerState
}

/** ListPodSandbox's answer: each sandbox without its labels and annotations. */
export function decodeSandboxSummaries(buffer: Buffer, names: StateNames): ListPodSandboxResponse {
  return {items: repeated(new BufferReader(buffer), (reader, end) => sandbox(reader, end, names))}
}

/** ListContainers' answer: each container with its labels (the kubelet's names are there) and without its annotations. */
export function decodeContainerSummaries(buffer: Buffer, names: StateNames): ListContainersResponse {
  return {containers: repeated(new BufferReader(buffer), (reader, end) => container(reader, end, names))}
}

/** The items of repeated field 1, the only field of both answers. */
function repeated<T>(reader: BufferReader, item: (reader: BufferReader, end: number) => T): T[] {
  const items: T[] = []
  while (reader.pos < reader.len) {
    const tag = reader.uint32()
    if (tag === ((1 << 3) | WireType.LengthDelimited)) items.push(item(reader, reader.fieldEnd()))
    else reader.skipField(tag)
  }

  return items
}

function sandbox(reader: BufferReader, to: number, names: StateNames): PodSandbox {
  const pod: PodSandbox = {
    id: '',
    metadata: undefined,
    state: names.sandbox(0),
    createdAt: '0',
    labels: SKIPPED,
    annotations: SKIPPED,
    runtimeHandler: '',
  }
  while (reader.pos < to) {
    const tag = reader.uint32()
    switch (tag) {
      case 10: {
        pod.id = reader.string()
        break
      }

      case 18: {
        pod.metadata = sandboxMetadata(reader, reader.fieldEnd())
        break
      }

      case 24: {
        pod.state = names.sandbox(reader.int32())
        break
      }

      case 32: {
        pod.createdAt = reader.int64().toString()
        break
      }

      case 58: {
        pod.runtimeHandler = reader.string()
        break
      }

      default:
        reader.skipField(tag)
    }
  }

  return pod
}

function sandboxMetadata(reader: BufferReader, to: number): PodSandboxMetadata {
  const metadata: PodSandboxMetadata = {name: '', uid: '', namespace: '', attempt: 0}
  while (reader.pos < to) {
    const tag = reader.uint32()
    switch (tag) {
      case 10: {
        metadata.name = reader.string()
        break
      }

      case 18: {
        metadata.uid = reader.string()
        break
      }

      case 26: {
        metadata.namespace = reader.string()
        break
      }

      case 32: {
        metadata.attempt = reader.uint32()
        break
      }

      default:
        reader.skipField(tag)
    }
  }

  return metadata
}

function container(reader: BufferReader, to: number, names: StateNames): Container {
  const item: Container = {
    id: '',
    podSandboxId: '',
    metadata: undefined,
    image: undefined,
    imageRef: '',
    state: names.container(0),
    createdAt: '0',
    labels: {},
    annotations: SKIPPED,
    imageId: '',
  }
  while (reader.pos < to) {
    const tag = reader.uint32()
    switch (tag) {
      case 10: {
        item.id = reader.string()
        break
      }

      case 18: {
        item.podSandboxId = reader.string()
        break
      }

      case 26: {
        item.metadata = containerMetadata(reader, reader.fieldEnd())
        break
      }

      case 34: {
        item.image = imageSpec(reader, reader.fieldEnd())
        break
      }

      case 42: {
        item.imageRef = reader.string()
        break
      }

      case 48: {
        item.state = names.container(reader.int32())
        break
      }

      case 56: {
        item.createdAt = reader.int64().toString()
        break
      }

      case 66: {
        entry(reader, reader.fieldEnd(), item.labels)
        break
      }

      case 82: {
        item.imageId = reader.string()
        break
      }

      default:
        reader.skipField(tag)
    }
  }

  return item
}

function containerMetadata(reader: BufferReader, to: number): ContainerMetadata {
  const metadata: ContainerMetadata = {name: '', attempt: 0}
  while (reader.pos < to) {
    const tag = reader.uint32()
    if (tag === 10) metadata.name = reader.string()
    else if (tag === 16) metadata.attempt = reader.uint32()
    else reader.skipField(tag)
  }

  return metadata
}

/** The image as asked for and as resolved; its annotations are skipped. */
function imageSpec(reader: BufferReader, to: number): ImageSpec {
  const spec: ImageSpec = {image: '', annotations: SKIPPED, userSpecifiedImage: '', runtimeHandler: '', imageRef: ''}
  while (reader.pos < to) {
    const tag = reader.uint32()
    switch (tag) {
      case 10: {
        spec.image = reader.string()
        break
      }

      case 146: {
        spec.userSpecifiedImage = reader.string()
        break
      }

      case 154: {
        spec.runtimeHandler = reader.string()
        break
      }

      case 162: {
        spec.imageRef = reader.string()
        break
      }

      default:
        reader.skipField(tag)
    }
  }

  return spec
}

/** One map<string, string> entry into `into` (key 1, value 2; either may be absent, as proto3 encodes ""). */
function entry(reader: BufferReader, to: number, into: Record<string, string>): void {
  let key = ''
  let value = ''
  while (reader.pos < to) {
    const tag = reader.uint32()
    if (tag === 10) key = reader.string()
    else if (tag === 18) value = reader.string()
    else reader.skipField(tag)
  }

  into[key] = value
}
