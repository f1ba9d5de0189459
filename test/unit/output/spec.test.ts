import {describe, expect, it} from 'vitest'

import {isMachineOutput, parseOutputSpec} from '../../../src/lib/output/spec.js'

const LIST = ['table', 'wide', 'json', 'yaml', 'name'] as const
const doc = {
  items: [
    {id: 'a1', metadata: {name: 'web'}},
    {id: 'b2', metadata: {name: 'db'}},
  ],
}

describe('parseOutputSpec: one -o for every command', () => {
  it('gives the fallback without -o, and each listed format by name', () => {
    expect(parseOutputSpec(undefined, undefined, LIST, 'table', {templates: true})).toEqual({kind: 'table'})
    for (const format of LIST) expect(parseOutputSpec(format, undefined, LIST, 'table', {templates: true})).toEqual({kind: format})
    expect(parseOutputSpec(' wide ', undefined, LIST, 'table')).toEqual({kind: 'wide'})
  })

  it('picks fields out of a list document with jsonpath= and go-template=', () => {
    const jsonpath = parseOutputSpec('jsonpath={.items[*].id}', undefined, LIST, 'table', {templates: true})
    expect(jsonpath.kind === 'jsonpath' && jsonpath.render(doc)).toBe('a1 b2')
    const template = parseOutputSpec('go-template={{len .items}}', undefined, LIST, 'table', {templates: true})
    expect(template.kind === 'template' && template.render(doc)).toBe('2')
  })

  it('refuses templates where the command does not take them, listing what it does take', () => {
    expect(() => parseOutputSpec('jsonpath={.items}', undefined, ['table', 'json', 'yaml'], 'table', {templates: false})).toThrow(
      '-o "jsonpath={.items}" is not a format here; use table|json|yaml',
    )
    expect(() => parseOutputSpec('go-template', undefined, ['table', 'json'], 'table', {templates: false})).toThrow(
      '-o "go-template" is not a format here; use table|json',
    )
    expect(() => parseOutputSpec('csv', undefined, LIST, 'table', {templates: true})).toThrow(
      '-o "csv" is not a format here; use table|wide|json|yaml|name|jsonpath=EXPR|go-template=TPL',
    )
  })

  it('says how to give a template when the command has no --template flag', () => {
    expect(() => parseOutputSpec('go-template', undefined, LIST, 'table', {templates: true, templateFlag: false})).toThrow(
      "-o go-template needs a template, e.g. -o go-template='{{.items}}'",
    )
    expect(() => parseOutputSpec('go-template', undefined, ['json'], 'json')).toThrow('-o go-template needs --template TPL')
  })

  it('compiles the expression up front: a typo is a usage error (exit 2)', () => {
    expect(() => parseOutputSpec('jsonpath={.items[x]}', undefined, LIST, 'table')).toThrow(expect.objectContaining({exitCode: 2}))
    expect(() => parseOutputSpec('go-template={{range .items}}', undefined, LIST, 'table')).toThrow(expect.objectContaining({exitCode: 2}))
  })
})

describe('isMachineOutput', () => {
  it('is true for what scripts read, false for what people read', () => {
    for (const kind of ['json', 'yaml'] as const) expect(isMachineOutput({kind})).toBe(true)
    expect(isMachineOutput(parseOutputSpec('jsonpath={.a}', undefined, [], 'table'))).toBe(true)
    for (const kind of ['table', 'wide', 'name'] as const) expect(isMachineOutput({kind})).toBe(false)
  })
})
