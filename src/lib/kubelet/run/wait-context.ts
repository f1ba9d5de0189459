/**
 * What watching one pod of a run needs (the run's waits: pod-wait.ts, settle.ts, wait-ready.ts): its
 * own file, so the waits share it without importing each other round a loop.
 */
import type {CriClient} from '../../cri/client.js'
import type {EventSink} from '../../kube/events.js'
import type {PodModel} from '../../manifest/model.js'

export interface PodWaitContext {
  client: CriClient
  pod: PodModel
  sandboxId: string
  events: EventSink
  /** Epoch ms: the run's deadline (--timeout). */
  deadline?: number
  /** The longest pause between two polls (ms). */
  pollMs: number
  signal: AbortSignal
  /** The pod in messages: name_namespace. */
  object: string
  step(text: string): void
}
