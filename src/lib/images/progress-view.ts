/**
 * How pull progress is shown: below the spinner's line on a terminal (one line per layer: short
 * digest, a bar, bytes done / total, rate; gone with the spinner), or one plain line per layer step
 * for logs and CI. Both only ever write to stderr, through the command's spinner and line writers.
 */
import {type LayerProgress, type LayerStep, shortDigest} from './ingests.js'
import {UsageError} from '../errors.js'
import type {ProgressView} from './pull-progress.js'

/** --progress's values (lib/flags.ts progressFlag). */
export type ProgressMode = 'auto' | 'tty' | 'plain' | 'none'

/** Layer lines under the spinner at most; the rest are counted in one more line. */
export const MAX_LAYER_LINES = 6
const BAR_WIDTH = 20

const UNITS = ['B', 'kB', 'MB', 'GB', 'TB']

/** Decimal bytes with one decimal from kB on ("25.2 MB"): stable width while a layer moves. */
export function byteText(bytes: number): string {
  let size = bytes
  let unit = 0
  while (size >= 1000 && unit < UNITS.length - 1) {
    size /= 1000
    unit++
  }

  return unit === 0 ? `${size} B` : `${size.toFixed(1)} ${UNITS[unit]}`
}

export function progressBar(done: number, total: number, width = BAR_WIDTH): string {
  const filled = total > 0 ? Math.min(width, Math.floor((done / total) * width)) : 0
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}]`
}

/** One layer's line on the terminal, e.g. "9e59143b7fdc [#####---------------]  6.3 MB / 25.2 MB  21.0 MB/s". */
export function layerLine(layer: LayerProgress): string {
  const id = shortDigest(layer.digest)
  if (layer.state === 'done') return `${id} ${progressBar(1, 1)}  ${byteText(layer.doneBytes)}  done`
  const of = layer.totalBytes > 0 ? ` / ${byteText(layer.totalBytes)}` : ''
  const rate = layer.bytesPerSecond > 0 ? `  ${byteText(Math.round(layer.bytesPerSecond))}/s` : ''
  return `${id} ${progressBar(layer.doneBytes, layer.totalBytes)}  ${byteText(layer.doneBytes)}${of}${rate}`
}

/**
 * The lines under the spinner, each cut to the terminal's width: every layer in the order seen, or
 * when there are more than MAX_LAYER_LINES, those still being fetched first and the rest counted.
 */
export function layerLines(layers: readonly LayerProgress[], columns: number): string[] {
  const ordered =
    layers.length > MAX_LAYER_LINES
      ? [...layers.filter((layer) => layer.state !== 'done'), ...layers.filter((layer) => layer.state === 'done')]
      : layers
  const shown = ordered.length > MAX_LAYER_LINES ? ordered.slice(0, MAX_LAYER_LINES - 1) : ordered
  const lines = shown.map((layer) => `  ${layerLine(layer)}`)
  const rest = ordered.slice(shown.length)
  if (rest.length > 0) {
    const done = rest.filter((layer) => layer.state === 'done').length
    lines.push(`  … ${rest.length} more layer${rest.length === 1 ? '' : 's'} (${done} done)`)
  }

  // Wider than the terminal, a line wraps and the spinner's redraw leaves its tail behind.
  const width = Math.max(10, columns - 1)
  return lines.map((line) => (line.length > width ? line.slice(0, width) : line))
}

/**
 * A plain line per step, in bytes for scripts and logs: "Downloading layer 9e59143b7fdc: 6291456 of
 * 25170222 bytes" when first seen (a poll may find it part-way), "Downloaded layer 9e59143b7fdc: 25170222 bytes".
 */
export function stepLine(step: LayerStep): string {
  const {digest, doneBytes, totalBytes} = step.layer
  const id = shortDigest(digest)
  if (step.kind === 'done') return `Downloaded layer ${id}: ${doneBytes} bytes`
  return `Downloading layer ${id}: ${doneBytes} of ${totalBytes > 0 ? totalBytes : 'unknown'} bytes`
}

interface SpinnerLike {
  text: string
}

/**
 * The spinner's text as a head line (what the command is doing, set by `setStep`) with the layer
 * lines under it; the spinner redraws them, keeps event lines above them and clears them when it stops.
 */
export class SpinnerProgressView implements ProgressView {
  private head: string
  private lines: string[] = []
  unavailable?: (why: string) => void

  constructor(
    private readonly spinner: SpinnerLike,
    private readonly columns: () => number,
  ) {
    this.head = spinner.text
  }

  /** This view, told when there is no content service to watch. */
  withUnavailable(unavailable: ((why: string) => void) | undefined): this {
    this.unavailable = unavailable
    return this
  }

  /** The head line (an arrow: handed around as an onStep callback). */
  setStep = (text: string): void => {
    this.head = text
    this.draw()
  }

  layers(layers: LayerProgress[]): void {
    this.lines = layerLines(layers, this.columns())
    this.draw()
  }

  private draw(): void {
    this.spinner.text = [this.head, ...this.lines].join('\n')
  }
}

/** Plain lines, each through `write` (the command's stderr writer, which keeps them clear of a spinner). */
export function plainProgressView(write: (line: string) => void, unavailable?: (why: string) => void): ProgressView {
  return {step: (step) => write(stepLine(step)), unavailable}
}

export interface ProgressOutlets {
  /** Whether the command shows its events (not -q, not -o json): `auto` shows bars only then. */
  showEvents: boolean
  /** A line on stderr, kept clear of the spinner. */
  line: (text: string) => void
  /** --debug's writer: told once when the endpoint has no content service. */
  debug?: (text: string) => void
}

/**
 * --progress: bars under the spinner (tty, and auto when events show on a terminal), plain lines,
 * or none (the spinner alone, as before). tty without a terminal is refused, naming the fix.
 */
export function chooseProgressView(
  mode: ProgressMode,
  display: SpinnerProgressView | undefined,
  outlets: ProgressOutlets,
): ProgressView | undefined {
  if (mode === 'tty' && !display) throw new UsageError('--progress tty needs stderr on a terminal; use --progress plain for logs and CI')
  const {debug} = outlets
  const unavailable = debug && ((why: string) => debug(`pull progress: no containerd content service on the image endpoint (${why})`))
  if (mode === 'plain') return plainProgressView(outlets.line, unavailable)
  const bars = mode === 'tty' || (mode === 'auto' && outlets.showEvents)
  return bars && display ? display.withUnavailable(unavailable) : undefined
}

/**
 * `run`'s spinner: its steps as the head line and, unless stdout is for a script, the pulls' layer
 * lines under it. No spinner (-q, no terminal) → neither.
 */
export function spinnerSteps(spinner: SpinnerLike | undefined, withLayers: boolean) {
  const display = spinner && new SpinnerProgressView(spinner, () => process.stderr.columns)
  return {onStep: display?.setStep, pullProgress: withLayers ? display : undefined}
}
