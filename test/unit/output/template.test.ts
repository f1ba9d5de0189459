import {describe, expect, it} from 'vitest'

import {parseOutputSpec, renderEach} from '../../../src/lib/output/spec.js'
import {compileJsonPath, compileTemplate} from '../../../src/lib/output/template.js'

const doc = {
  status: {
    id: 'abc',
    state: 'CONTAINER_EXITED',
    exitCode: 3,
    finishedAt: null,
    labels: {'io.kubernetes.pod.name': 'web', app: 'demo'},
    mounts: [
      {hostPath: '/a', readonly: true},
      {hostPath: '/b', readonly: false},
    ],
    metadata: {name: 'app', attempt: 0},
  },
  info: {pid: 42},
}

describe('Go-template dialect', () => {
  it('prints field paths and literal text', () => {
    expect(compileTemplate('{{.status.id}}')(doc)).toBe('abc')
    expect(compileTemplate('{{ .status.state }} exit={{.status.exitCode}} pid={{.info.pid}}')(doc)).toBe('CONTAINER_EXITED exit=3 pid=42')
    expect(compileTemplate('{{.status.metadata}}')(doc)).toBe('{"name":"app","attempt":0}')
    expect(compileTemplate('[{{.status.finishedAt}}]')(doc)).toBe('[]')
  })

  it('supports index, json, len, upper, lower and pipes', () => {
    expect(compileTemplate('{{index .status.labels "io.kubernetes.pod.name"}}')(doc)).toBe('web')
    expect(compileTemplate('{{index .status.mounts 1}}')(doc)).toBe('{"hostPath":"/b","readonly":false}')
    expect(compileTemplate('{{index .status.mounts 0 "hostPath"}}')(doc)).toBe('/a')
    expect(compileTemplate('{{json .status.labels}}')(doc)).toBe('{"io.kubernetes.pod.name":"web","app":"demo"}')
    expect(compileTemplate('{{.status.state | lower}}')(doc)).toBe('container_exited')
    expect(compileTemplate('{{len .status.mounts}} {{upper .status.metadata.name}}')(doc)).toBe('2 APP')
    expect(compileTemplate('{{.info | json}}')(doc)).toBe('{"pid":42}')
  })

  it('trims whitespace beside {{- and -}}', () => {
    expect(compileTemplate('a   {{- .status.id -}}   b')(doc)).toBe('aabcb')
  })

  it('fails on a missing key, naming it and what exists', () => {
    expect(() => compileTemplate('{{.status.nope}}')(doc)).toThrow(/template: no field "nope" at \.status \(it has: id, state/)
    expect(() => compileTemplate('{{.status.id.deeper}}')(doc)).toThrow(/\.status\.id is a string, it has no field "deeper"/)
    expect(() => compileTemplate('{{index .status.mounts 5}}')(doc)).toThrow(/out of range/)
  })

  it('rejects what it does not support when compiling', () => {
    expect(() => compileTemplate('{{range .items}}{{.id}}{{end}}')).toThrow(/not supported/)
    expect(() => compileTemplate('{{status.id}}')).toThrow(/fields start with a dot/)
    expect(() => compileTemplate('{{.status.id')).toThrow(/unclosed/)
    expect(() => compileTemplate('{{.status | nope}}')).toThrow(/not a function/)
    expect(() => compileTemplate('{{.a.b-c}}')).toThrow(/index/)
  })
})

describe('JSONPath (kubectl subset)', () => {
  it('picks fields, indexes, wildcards and quoted keys', () => {
    expect(compileJsonPath('{.status.state}')(doc)).toBe('CONTAINER_EXITED')
    expect(compileJsonPath('{.status.mounts[1].hostPath}')(doc)).toBe('/b')
    expect(compileJsonPath('{.status.mounts[-1].hostPath}')(doc)).toBe('/b')
    expect(compileJsonPath('{.status.mounts[*].hostPath}')(doc)).toBe('/a /b')
    expect(compileJsonPath("{.status.labels['io.kubernetes.pod.name']}")(doc)).toBe('web')
    expect(compileJsonPath('{$.info.pid}')(doc)).toBe('42')
  })

  it('mixes text and expressions, and accepts the relaxed forms', () => {
    expect(compileJsonPath(String.raw`id={.status.id}{"\t"}exit={.status.exitCode}`)(doc)).toBe('id=abc\texit=3')
    expect(compileJsonPath('.status.id')(doc)).toBe('abc')
    expect(compileJsonPath('{status.id}')(doc)).toBe('abc')
    expect(compileJsonPath('{.status.finishedAt}')(doc)).toBe('')
  })

  it('fails on missing keys and unsupported syntax', () => {
    expect(() => compileJsonPath('{.status.nope}')(doc)).toThrow(/jsonpath: no field "nope" at \.status/)
    expect(() => compileJsonPath('{..id}')).toThrow(/recursive descent/)
    expect(() => compileJsonPath('{range .items[*]}{.id}{end}')).toThrow(/not supported/)
    expect(() => compileJsonPath('{.status.mounts[x]}')).toThrow(/not an index/)
    expect(() => compileJsonPath('{.status')).toThrow(/unclosed/)
  })
})

describe('parseOutputSpec', () => {
  it('takes plain formats and the default', () => {
    expect(parseOutputSpec(undefined, undefined, ['json', 'yaml'], 'json')).toEqual({kind: 'json'})
    expect(parseOutputSpec('yaml', undefined, ['json', 'yaml'], 'json')).toEqual({kind: 'yaml'})
  })

  it('compiles jsonpath= and go-template= and --template', () => {
    expect(parseOutputSpec('jsonpath={.status.id}', undefined, ['json'], 'json')).toMatchObject({kind: 'jsonpath'})
    expect(parseOutputSpec('go-template={{.status.id}}', undefined, ['json'], 'json')).toMatchObject({kind: 'template'})
    const spec = parseOutputSpec('go-template', '{{.status.id}}', ['json'], 'json')
    expect(spec.kind === 'template' && spec.render(doc)).toBe('abc')
    expect(parseOutputSpec(undefined, '{{.status.id}}', ['json'], 'json')).toMatchObject({kind: 'template'})
  })

  it('rejects bad combinations and formats with usage errors', () => {
    expect(() => parseOutputSpec('json', '{{.a}}', ['json'], 'json')).toThrow(/--template cannot be used with -o json/)
    expect(() => parseOutputSpec('table', undefined, ['json', 'yaml'], 'json')).toThrow(/is not a format here/)
    expect(() => parseOutputSpec('jsonpath=', undefined, ['json'], 'json')).toThrow(/needs an expression/)
    expect(() => parseOutputSpec('go-template', undefined, ['json'], 'json')).toThrow(expect.objectContaining({exitCode: 2}))
    expect(() => parseOutputSpec('jsonpath={..x}', undefined, ['json'], 'json')).toThrow(expect.objectContaining({exitCode: 2}))
  })

  it('renders one line per document', () => {
    expect(renderEach(compileJsonPath('{.status.id}'), [doc, {status: {id: 'def'}}])).toBe('abc\ndef')
  })
})
