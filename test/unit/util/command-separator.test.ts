import {describe, expect, it} from 'vitest'

import {separateCommand, valueFlagSpellings} from '../../../src/lib/util/command-separator.js'

const VALUES = new Set(['-n', '--namespace', '--timeout', '--runtime-endpoint'])
const separate = (argv: string[]) => separateCommand(argv, (flag) => VALUES.has(flag))

describe('separateCommand', () => {
  it('puts "--" before the first word after the container, as Go flag parsing stops there', () => {
    expect(separate(['c1', 'ls', '-l'])).toEqual(['c1', '--', 'ls', '-l'])
    expect(separate(['-n', 'shop', 'web/app', 'sh', '-c', 'ps'])).toEqual(['-n', 'shop', 'web/app', '--', 'sh', '-c', 'ps'])
    expect(separate(['-it', '--timeout', '5s', 'c1', 'sh'])).toEqual(['-it', '--timeout', '5s', 'c1', '--', 'sh'])
    expect(separate(['--namespace=shop', 'web/app', 'echo', 'x'])).toEqual(['--namespace=shop', 'web/app', '--', 'echo', 'x'])
  })

  it('leaves an argv that has "--" already, or no command, as it is', () => {
    expect(separate(['c1', '--timeout', '5s', '--', 'ls'])).toEqual(['c1', '--timeout', '5s', '--', 'ls'])
    expect(separate(['c1', '--', '--'])).toEqual(['c1', '--', '--'])
    expect(separate(['c1'])).toEqual(['c1'])
    expect(separate(['-n', 'shop'])).toEqual(['-n', 'shop'])
  })
})

describe('valueFlagSpellings', () => {
  it('names the long and short spellings of the flags that take a value', () => {
    const spellings = valueFlagSpellings({
      namespace: {type: 'option', char: 'n'},
      tty: {type: 'boolean', char: 't'},
      timeout: {type: 'option'},
    })
    expect([...spellings].sort()).toEqual(['--namespace', '--timeout', '-n'])
  })
})
