/**
 * The one printer of kubelet events (kube/events.ts) for the commands, in the three shapes they
 * show: `run`'s live table like `kubectl describe` (output/timeline.ts), `pull`'s compact line per
 * event, and `kill`'s warnings only (its Killing events are implied by its summary line).
 */
import type {PodEvent} from '../kube/events.js'
import {podFullName} from '../kube/helpers.js'
import {EventTimeline, type TimelineOptions} from './timeline.js'

export type EventStyle = (Omit<TimelineOptions, 'colorWarning'> & {kind: 'timeline'}) | {kind: 'compact'} | {kind: 'warnings'}

/** Colours a warning; the identity when colour is off. */
export type Paint = (text: string) => string

/** Turns each event into its line (without the newline), or undefined when the style leaves it out. */
export function eventLines(style: EventStyle, warn: Paint): (event: PodEvent) => string | undefined {
  switch (style.kind) {
    case 'timeline': {
      const timeline = new EventTimeline({...style, colorWarning: warn})
      return (event) => timeline.format(event)
    }

    case 'compact': {
      return (event) => {
        const line = `${event.type.padEnd(8)}${event.reason.padEnd(18)}${event.message}`
        return event.type === 'Warning' ? warn(line) : line
      }
    }

    case 'warnings': {
      return (event) => {
        if (event.type !== 'Warning') return
        return `${warn('Warning:')} ${event.reason} ${event.object ?? ''}: ${event.message}`
      }
    }
  }
}

/** The pods (and their containers) a run may report on, as far as the timeline needs them. */
export interface TimelinePod {
  name: string
  namespace: string
  initContainers: ReadonlyArray<{name: string}>
  containers: ReadonlyArray<{name: string}>
}

/**
 * `run`'s timeline: every pod and container an event may name sizes the OBJECT column; "web_default/" is left out for one pod.
 * A supervisor's (`run --supervise`) names itself too, gives each event's time and names each object whole, as
 * `sync --watch` does: its log is read hours in, and grepped for a pod's name.
 */
export function podTimeline(pods: readonly TimelinePod[], {supervisor = false} = {}): EventStyle {
  const objects = pods.flatMap((pod) => {
    const name = podFullName(pod.name, pod.namespace)
    return [name, ...[...pod.initContainers, ...pod.containers].map((container) => `${name}/${container.name}`)]
  })
  const stripPrefix = pods.length === 1 ? `${podFullName(pods[0].name, pods[0].namespace)}/` : undefined
  if (!supervisor) return {kind: 'timeline', objects, stripPrefix}
  return {kind: 'timeline', objects: [...objects, 'supervisor'], clock: 'time'}
}
