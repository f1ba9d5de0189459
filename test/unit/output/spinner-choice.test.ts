import {describe, expect, test} from 'vitest'

import {spinnerWanted} from '../../../src/lib/output/spinner-choice.js'

describe('spinnerWanted', () => {
  test('a terminal with a width gets a spinner, also when CI is set', () => {
    expect(spinnerWanted({isTTY: true, columns: 80}, {TERM: 'xterm'})).toBe(true)
    expect(spinnerWanted({isTTY: true, columns: 80}, {TERM: 'xterm', CI: 'true'})).toBe(true)
  })

  test('no spinner off a terminal, on a zero-width one, or with TERM=dumb', () => {
    expect(spinnerWanted({isTTY: false, columns: 80}, {})).toBe(false)
    expect(spinnerWanted({isTTY: true, columns: 0}, {})).toBe(false)
    expect(spinnerWanted({isTTY: true}, {})).toBe(false)
    expect(spinnerWanted({isTTY: true, columns: 80}, {TERM: 'dumb'})).toBe(false)
  })
})
