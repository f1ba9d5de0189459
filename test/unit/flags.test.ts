import {describe, expect, it} from 'vitest'

import {durationFlag, outputChoicesOf, outputFlag} from '../../src/lib/flags.js'

describe('outputFlag', () => {
  it('keeps the plain help of commands without templates, and what the base command reads', () => {
    const flag = outputFlag(['table', 'json', 'yaml'])
    expect(flag).toMatchObject({char: 'o', summary: 'Output format: table|json|yaml.', helpValue: 'table|json|yaml'})
    expect(flag.options).toBeUndefined()
    expect(outputChoicesOf({output: flag})).toEqual({formats: ['table', 'json', 'yaml'], templates: false, fallback: 'table'})
  })

  it('lists the default first and the template forms for commands that take them', () => {
    const flag = outputFlag(['table', 'wide', 'json', 'yaml', 'name'], {templates: true})
    expect(flag.summary).toBe('Output format: table (default), wide, json, yaml, name, jsonpath=EXPR, go-template=TPL.')
    expect(flag.helpValue).toBe('table|wide|json|yaml|name|jsonpath=EXPR|go-template=TPL')
    // inspect's and version's help text, unchanged by the move to one parser
    const inspect = outputFlag(['json', 'yaml'], {templates: true})
    expect(inspect.summary).toBe('Output format: json (default), yaml, jsonpath=EXPR, go-template=TPL.')
  })

  it('takes a fallback outside its formats (pull: its human lines)', () => {
    expect(outputChoicesOf({output: outputFlag(['json', 'yaml'], {fallback: 'table'})})?.fallback).toBe('table')
    expect(outputChoicesOf({})).toBeUndefined()
    expect(outputChoicesOf(undefined)).toBeUndefined()
  })
})

describe('durationFlag', () => {
  it('parses to milliseconds and names the flag when it cannot', async () => {
    const flag = durationFlag({})
    expect(await flag.parse('1m', {} as never, {...flag, name: 'timeout'} as never)).toBe(60_000)
    await expect(flag.parse('soon', {} as never, {...flag, name: 'timeout'} as never)).rejects.toThrow(
      '--timeout "soon" is not a duration; use e.g. 10s, 500ms or 2m',
    )
  })
})
