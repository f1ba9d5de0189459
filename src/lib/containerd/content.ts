/**
 * containerd's own content service on the CRI socket: its ingests in flight (ListStatuses) are the
 * only place a CRI pull's bytes can be watched, since PullImage itself reports nothing until done.
 * Read-only and best effort: the caller learns `unsupported` (CRI-O, or any endpoint without the
 * service) and stops asking; nothing here is ever a command's error.
 */
import type {Status} from '../../generated/containerd/services/content/v1/content.js'
import {GrpcCode, type GrpcFailure} from '../errors.js'
import {clampTimerMs} from '../util/duration.js'

/** The namespace containerd's CRI plugin keeps its images and ingests in (containerd's constant since 1.1). */
export const CRI_CONTAINERD_NAMESPACE = 'k8s.io'
/** containerd reads the namespace of a call from this request header. */
export const NAMESPACE_HEADER = 'containerd-namespace'
/** One poll; a content service that cannot list its ingests this fast is not worth waiting for. */
export const LIST_STATUSES_TIMEOUT_MS = 2000

export type IngestStatus = Pick<Status, 'ref' | 'offset' | 'total' | 'startedAt' | 'updatedAt'>

/** What one poll gave: the ingests, or why there are none to be had. */
export type IngestListing =
  | {kind: 'statuses'; statuses: IngestStatus[]}
  /** No content service here (UNIMPLEMENTED: unknown service), or it refuses us: stop asking. */
  | {kind: 'unsupported'; why: string}
  /** This poll failed (timeout, a busy runtime): the next may work. */
  | {kind: 'failed'; why: string}

export interface IngestSource {
  listStatuses(): Promise<IngestListing>
  close(): void
}

type GrpcModule = typeof import('@grpc/grpc-js')
type ContentModule = typeof import('../../generated/containerd/services/content/v1/content.js')

/** The ingests of one endpoint's CRI namespace, over a channel of its own (opened on the first poll, closed by close()). */
export class ContentIngests implements IngestSource {
  private client?: InstanceType<ContentModule['ContentClient']>
  private modules?: Promise<{grpc: GrpcModule; content: ContentModule}>

  constructor(
    readonly endpoint: string,
    private readonly namespace = CRI_CONTAINERD_NAMESPACE,
  ) {}

  async listStatuses(): Promise<IngestListing> {
    this.modules ??= Promise.all([import('@grpc/grpc-js'), import('../../generated/containerd/services/content/v1/content.js')]).then(
      ([grpc, content]) => ({grpc, content}),
    )
    const {grpc, content} = await this.modules
    this.client ??= new content.ContentClient(this.endpoint, grpc.credentials.createInsecure(), {
      'grpc.default_authority': 'localhost',
      'grpc.enable_retries': 0,
    })
    const metadata = new grpc.Metadata()
    metadata.set(NAMESPACE_HEADER, this.namespace)
    const {client} = this
    return new Promise((resolve) => {
      client.listStatuses({filters: []}, metadata, {deadline: Date.now() + clampTimerMs(LIST_STATUSES_TIMEOUT_MS)}, (error, response) => {
        if (error) resolve(classify(error))
        else resolve({kind: 'statuses', statuses: response.statuses})
      })
    })
  }

  close(): void {
    this.client?.close()
    this.client = undefined
  }
}

/** UNIMPLEMENTED, or a refusal no retry changes, ends the watching; a slow or busy answer only skips a poll. */
export function classify(error: GrpcFailure): IngestListing {
  const why = `${codeName(error.code)}: ${(error.details || error.message || 'no details').trim()}`
  switch (error.code) {
    case GrpcCode.UNIMPLEMENTED:
    case GrpcCode.INVALID_ARGUMENT:
    case GrpcCode.FAILED_PRECONDITION:
    case GrpcCode.NOT_FOUND:
    case GrpcCode.PERMISSION_DENIED:
    case GrpcCode.UNAUTHENTICATED: {
      return {kind: 'unsupported', why}
    }

    default: {
      return {kind: 'failed', why}
    }
  }
}

function codeName(code: number | undefined): string {
  const name = Object.entries(GrpcCode).find(([, value]) => value === code)?.[0]
  return name ?? `code ${code ?? '?'}`
}
