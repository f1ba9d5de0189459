/**
 * Events as the kubelet records them (TYPE, REASON, MESSAGE), e.g. Normal Pulling "Pulling image
 * "busybox"". Runtime operations report through an EventSink; commands decide how to show them.
 */
export interface PodEvent {
  type: 'Normal' | 'Warning'
  reason: string
  message: string
  /** What the event is about, e.g. "pod/web_default" or "container/app". */
  object?: string
  at: Date
}

export type EventSink = (event: PodEvent) => void

export const discardEvents: EventSink = () => {}

export function normalEvent(reason: string, message: string, object?: string): PodEvent {
  return {type: 'Normal', reason, message, object, at: new Date()}
}

export function warningEvent(reason: string, message: string, object?: string): PodEvent {
  return {type: 'Warning', reason, message, object, at: new Date()}
}
