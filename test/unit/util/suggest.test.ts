import {describe, expect, it} from 'vitest'

import {closest, editDistance, flagSuggestion, notFoundCommand, unknownCommandMessage} from '../../../src/lib/util/suggest.js'

describe('did you mean', () => {
  it('counts a swap of neighbours as one edit', () => {
    expect(editDistance('pdos', 'pods')).toBe(1)
    expect(editDistance('ps', 'ps')).toBe(0)
    expect(editDistance('stat', 'status')).toBe(2)
  })

  it('suggests the closest word only when it is close for its length', () => {
    const commands = ['pods', 'ps', 'pull', 'status', 'stats', 'statsp']
    expect(closest('pdos', commands)).toBe('pods')
    expect(closest('staus', commands)).toBe('status')
    expect(closest('zzzzzz', commands)).toBeUndefined()
    expect(unknownCommandMessage('pdos', commands)).toBe('unknown command "pdos"; did you mean pods? (podctl --help lists the commands)')
    expect(unknownCommandMessage('zzz', commands)).toBe('unknown command "zzz" (podctl --help lists the commands)')
    expect(unknownCommandMessage('--pod-dir-root', commands)).toBe(
      '--pod-dir-root is not a global flag and no command follows it; give the command too (podctl --help lists them)',
    )
  })

  it("reads oclif's errors: a missing command, and unknown flags against the command's own", () => {
    expect(notFoundCommand(Object.assign(new Error('command pdos not found'), {oclif: {exit: 2}}))).toBe('pdos')
    expect(notFoundCommand(new Error('command pdos not found'))).toBeUndefined()
    const parse = {input: {flags: {namespace: {}, name: {}}}}
    expect(flagSuggestion({flags: ['--namepsace'], parse})).toBe(' (did you mean --namespace?)')
    expect(flagSuggestion({flags: ['-x'], parse})).toBe('')
    expect(flagSuggestion(new Error('other'))).toBe('')
  })
})
