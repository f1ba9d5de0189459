import {describe, expect, test} from 'vitest'

import {UsageError} from '../../../src/lib/errors.js'
import type {LayerProgress} from '../../../src/lib/images/ingests.js'
import {
  byteText,
  chooseProgressView,
  layerLine,
  layerLines,
  MAX_LAYER_LINES,
  plainProgressView,
  progressBar,
  SpinnerProgressView,
  spinnerSteps,
  stepLine,
} from '../../../src/lib/images/progress-view.js'

const digest = (n: number) => `sha256:${n.toString(16).padStart(2, '0').repeat(32)}`

function layer(n: number, fields: Partial<LayerProgress> = {}): LayerProgress {
  return {
    digest: digest(n),
    state: 'downloading',
    doneBytes: 6_300_000,
    totalBytes: 25_170_222,
    bytesPerSecond: 21_000_000,
    firstSeenMs: 0,
    lastSeenMs: 0,
    ...fields,
  }
}

describe('byteText and progressBar', () => {
  test.each([
    [0, '0 B'],
    [999, '999 B'],
    [1000, '1.0 kB'],
    [25_170_222, '25.2 MB'],
    [3_500_000_000, '3.5 GB'],
  ])('%d bytes → %s', (bytes, text) => {
    expect(byteText(bytes)).toBe(text)
  })

  test.each([
    [0, 100, '[--------------------]'],
    [50, 100, '[##########----------]'],
    [100, 100, '[####################]'],
    [150, 100, '[####################]'],
    // No total known yet: an empty bar, never a full one.
    [50, 0, '[--------------------]'],
  ])('%d of %d', (done, total, bar) => {
    expect(progressBar(done, total)).toBe(bar)
  })
})

describe('layer lines on the terminal', () => {
  test('a layer being fetched: short digest, bar, bytes done / total, rate', () => {
    expect(layerLine(layer(1))).toBe('010101010101 [#####---------------]  6.3 MB / 25.2 MB  21.0 MB/s')
  })

  test('no total and no rate yet: only what is known', () => {
    expect(layerLine(layer(1, {doneBytes: 1000, totalBytes: 0, bytesPerSecond: 0}))).toBe('010101010101 [--------------------]  1.0 kB')
  })

  test('a finished layer: full bar, its size, done', () => {
    expect(layerLine(layer(1, {state: 'done', doneBytes: 25_170_222}))).toBe('010101010101 [####################]  25.2 MB  done')
  })

  test('every layer in order while they fit', () => {
    const lines = layerLines([layer(1, {state: 'done'}), layer(2)], 120)
    expect(lines.map((line) => line.slice(0, 14))).toEqual(['  010101010101', '  020202020202'])
  })

  test('more than fit: those being fetched first, the rest counted', () => {
    const layers = [
      ...Array.from({length: 4}, (_, i) => layer(i + 1, {state: 'done'})),
      ...Array.from({length: 4}, (_, i) => layer(i + 10)),
    ]
    const lines = layerLines(layers, 120)
    expect(lines).toHaveLength(MAX_LAYER_LINES)
    expect(lines.slice(0, 4).every((line) => line.includes('/s'))).toBe(true)
    expect(lines.at(-1)).toBe('  … 3 more layers (3 done)')
  })

  test('cut to the terminal width, so no line wraps', () => {
    expect(layerLines([layer(1)], 30)).toEqual(['  010101010101 [#####--------'])
  })
})

describe('plain lines', () => {
  test('started: bytes so far of the total', () => {
    expect(stepLine({kind: 'started', layer: layer(1, {doneBytes: 1_048_576})})).toBe(
      'Downloading layer 010101010101: 1048576 of 25170222 bytes',
    )
    expect(stepLine({kind: 'started', layer: layer(1, {doneBytes: 0, totalBytes: 0})})).toBe(
      'Downloading layer 010101010101: 0 of unknown bytes',
    )
  })

  test('done: its size', () => {
    expect(stepLine({kind: 'done', layer: layer(1, {state: 'done', doneBytes: 25_170_222})})).toBe(
      'Downloaded layer 010101010101: 25170222 bytes',
    )
  })

  test('plainProgressView writes one line per step', () => {
    const lines: string[] = []
    const view = plainProgressView((line) => lines.push(line))
    view.step?.({kind: 'done', layer: layer(1, {state: 'done', doneBytes: 5})})
    expect(lines).toEqual(['Downloaded layer 010101010101: 5 bytes'])
    expect(view.layers).toBeUndefined()
  })
})

describe('SpinnerProgressView', () => {
  test('the head line, then the layer lines', () => {
    const spinner = {text: 'Pulling image: 0 of 1 done'}
    const view = new SpinnerProgressView(spinner, () => 80)
    view.layers([layer(1)])
    expect(spinner.text).toBe('Pulling image: 0 of 1 done\n  010101010101 [#####---------------]  6.3 MB / 25.2 MB  21.0 MB/s')
    view.setStep('Pulling image: 1 of 1 done')
    expect(spinner.text.split('\n')[0]).toBe('Pulling image: 1 of 1 done')
    view.layers([])
    expect(spinner.text).toBe('Pulling image: 1 of 1 done')
  })
})

describe('chooseProgressView', () => {
  const outlets = {showEvents: true, line() {}}
  const display = () => new SpinnerProgressView({text: ''}, () => 80)

  test('auto: bars when events show on a terminal, else nothing', () => {
    const shown = display()
    expect(chooseProgressView('auto', shown, outlets)).toBe(shown)
    expect(chooseProgressView('auto', display(), {...outlets, showEvents: false})).toBeUndefined()
    expect(chooseProgressView('auto', undefined, outlets)).toBeUndefined()
  })

  test('tty: bars even with -q or -o json; refused without a terminal', () => {
    const shown = display()
    expect(chooseProgressView('tty', shown, {...outlets, showEvents: false})).toBe(shown)
    expect(() => chooseProgressView('tty', undefined, outlets)).toThrow(
      new UsageError('--progress tty needs stderr on a terminal; use --progress plain for logs and CI'),
    )
  })

  test('plain: lines through the command’s stderr writer, with or without a spinner', () => {
    const lines: string[] = []
    const view = chooseProgressView('plain', undefined, {showEvents: false, line: (text) => lines.push(text)})
    view?.step?.({kind: 'done', layer: layer(1, {state: 'done', doneBytes: 7})})
    expect(lines).toEqual(['Downloaded layer 010101010101: 7 bytes'])
  })

  test('none: the spinner alone', () => {
    expect(chooseProgressView('none', display(), outlets)).toBeUndefined()
  })

  test('--debug hears once that there is no content service', () => {
    const debug: string[] = []
    const view = chooseProgressView('auto', display(), {...outlets, debug: (text) => debug.push(text)})
    view?.unavailable?.('UNIMPLEMENTED: unknown service')
    expect(debug).toEqual(['pull progress: no containerd content service on the image endpoint (UNIMPLEMENTED: unknown service)'])
  })
})

describe('spinnerSteps (run)', () => {
  test('steps as the head line, layers under it unless stdout is for a script', () => {
    const spinner = {text: 'Starting pod web'}
    const {onStep, pullProgress} = spinnerSteps(spinner, true)
    onStep?.('web: pulling image')
    pullProgress?.layers?.([layer(1)])
    expect(spinner.text.split('\n')).toHaveLength(2)
    expect(spinner.text.split('\n')[0]).toBe('web: pulling image')
    expect(spinnerSteps(spinner, false).pullProgress).toBeUndefined()
  })

  test('no spinner: neither', () => {
    expect(spinnerSteps(undefined, true)).toEqual({onStep: undefined, pullProgress: undefined})
  })
})
