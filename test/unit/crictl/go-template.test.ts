/**
 * crictl's -o go-template is Go's text/template over the JSON document. Expected texts are what the
 * reference crictl v1.37.0 printed for `crictl info -o go-template --template T` on the lab.
 */
/* eslint-disable @stylistic/max-len -- expected texts are kept whole, as crictl prints them */
import {describe, expect, it} from 'vitest'

import {renderGoTemplate, validateGoTemplate} from '../../../src/lib/crictl/go-template.js'

const INFO = JSON.stringify({
  golang: 'go1.19.8',
  status: {
    conditions: [
      {message: '', reason: '', status: true, type: 'RuntimeReady'},
      {message: '', reason: '', status: true, type: 'NetworkReady'},
    ],
  },
  config: {containerd: {snapshotter: 'overlayfs'}, maxConcurrentDownloads: 3, note: null},
})

const render = (template: string) => renderGoTemplate(template, INFO)

describe("crictl's go-template, as Go's text/template", () => {
  it('index of a missing key is the zero value: <no value>', () => {
    expect(render('{{index .status "nokey"}}')).toBe('<no value>')
    expect(render('{{.config.note}}')).toBe('<no value>')
  })

  it('prints maps and lists as fmt does: map[k:v] with sorted keys, [a b]', () => {
    expect(render('{{index .status}}')).toBe(
      'map[conditions:[map[message: reason: status:true type:RuntimeReady] map[message: reason: status:true type:NetworkReady]]]',
    )
    expect(render('{{.config}}')).toBe('map[containerd:map[snapshotter:overlayfs] maxConcurrentDownloads:3 note:<nil>]')
  })

  it("a missing field is an error in Go's words, placed at the chain", () => {
    expect(() => render('{{.status.nokey}}')).toThrow(
      'failed to template data: template: tmplExecuteRawJSON:1:9: executing "tmplExecuteRawJSON" at <.status.nokey>: map has no entry for key "nokey"',
    )
    expect(() => render('{{.status.conditions.x}}')).toThrow("can't evaluate field x in type interface {}")
    expect(() => render('{{index .status.conditions 9}}')).toThrow('error calling index: index out of range: 9')
  })

  it('ranges, variables, conditions, comparisons and functions', () => {
    expect(render('{{range .status.conditions}}{{.type}}={{.status}} {{end}}')).toBe('RuntimeReady=true NetworkReady=true ')
    expect(render('{{range $i, $c := .status.conditions}}{{$i}}:{{$c.type}},{{end}}')).toBe('0:RuntimeReady,1:NetworkReady,')
    expect(render('{{(index .status.conditions 0).type}} {{len .status.conditions}}')).toBe('RuntimeReady 2')
    expect(render('{{if .status}}yes{{else}}no{{end}} {{eq .golang "x"}} {{upper "ab"}}{{title "hello world"}}')).toBe(
      'yes false ABHello World',
    )
    expect(render('{{.status | json}}')).toBe(
      '{"conditions":[{"message":"","reason":"","status":true,"type":"RuntimeReady"},{"message":"","reason":"","status":true,"type":"NetworkReady"}]}\n',
    )
    expect(render('{{printf "%s-%d" .golang (len .status.conditions)}} {{.config.maxConcurrentDownloads}}')).toBe('go1.19.8-2 3')
    expect(render('{{- .golang -}}  {{- "x"}}')).toBe('go1.19.8x')
  })

  it('a template Go cannot parse, in its words', () => {
    expect(() => render('{{nofunc .}}')).toThrow(
      'failed to generate go-template: template: tmplExecuteRawJSON:1: function "nofunc" not defined',
    )
    expect(() => validateGoTemplate('{{.a')).toThrow('template: :1: unclosed action')
    expect(() => validateGoTemplate('{{if .a}}x')).toThrow('unexpected EOF')
  })
})
