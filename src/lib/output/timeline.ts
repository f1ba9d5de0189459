/**
 * A live event table like the Events section of `kubectl describe pod` (TYPE, REASON, AGE,
 * OBJECT, MESSAGE), printed one row at a time as events happen. Column widths are fixed up front
 * (from the objects that can appear) so rows line up without buffering.
 */
import type {PodEvent} from '../kube/events.js'

export interface TimelineOptions {
  /** Every object an event may name, to size the OBJECT column. */
  objects: readonly string[]
  /** Dropped from the front of objects (e.g. "web_default/" when only one pod runs). */
  stripPrefix?: string
  /** The run's start (ages are relative to it). */
  startedAt?: number
  /**
   * 'time': a TIME column with each event's own time (UTC, to the second) instead of its AGE since
   * the start, for a supervisor's log: hours in, "183m2s since the supervisor started" tells nothing.
   */
  clock?: 'age' | 'time'
  colorWarning?: (text: string) => string
}

const TYPE_WIDTH = 9
const REASON_WIDTH = 24
const AGE_WIDTH = 7
/** "2026-12-07T14:41:05Z" and a space. */
const TIME_WIDTH = 21

export class EventTimeline {
  private readonly objectWidth: number
  private readonly startedAt: number
  private headerPrinted = false

  constructor(private readonly options: TimelineOptions) {
    this.startedAt = options.startedAt ?? Date.now()
    const widest = Math.max('OBJECT'.length, ...options.objects.map((object) => this.objectName(object).length))
    this.objectWidth = widest + 3
  }

  header(): string {
    const when = this.options.clock === 'time' ? 'TIME'.padEnd(TIME_WIDTH) : 'AGE'.padEnd(AGE_WIDTH)
    const columns = 'TYPE'.padEnd(TYPE_WIDTH) + 'REASON'.padEnd(REASON_WIDTH) + when
    return `${columns}${'OBJECT'.padEnd(this.objectWidth)}MESSAGE`
  }

  /** The row for one event, preceded by the header the first time. */
  format(event: PodEvent): string {
    const row =
      event.type.padEnd(TYPE_WIDTH) +
      `${event.reason} `.padEnd(REASON_WIDTH) +
      this.when(event.at) +
      `${this.objectName(event.object ?? '')} `.padEnd(this.objectWidth) +
      event.message
    const line = event.type === 'Warning' && this.options.colorWarning ? this.options.colorWarning(row) : row
    if (this.headerPrinted) return line
    this.headerPrinted = true
    return `${this.header()}\n${line}`
  }

  private when(at: Date): string {
    if (this.options.clock === 'time') return `${at.toISOString().slice(0, 19)}Z `.padEnd(TIME_WIDTH)
    return `${eventAge(at.getTime() - this.startedAt)} `.padEnd(AGE_WIDTH)
  }

  private objectName(object: string): string {
    const prefix = this.options.stripPrefix
    return prefix && object.startsWith(prefix) ? object.slice(prefix.length) || object : object
  }
}

/** Age since the run started: "0.4s", "12s", "2m5s" (finer than kubectl's, as the run is short). */
export function eventAge(ms: number): string {
  const value = Math.max(0, ms)
  if (value < 10_000) return `${(value / 1000).toFixed(1)}s`
  const seconds = Math.floor(value / 1000)
  if (seconds < 120) return `${seconds}s`
  return `${Math.floor(seconds / 60)}m${seconds % 60}s`
}
