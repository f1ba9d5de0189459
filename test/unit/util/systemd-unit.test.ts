import {describe, expect, it} from 'vitest'

import {execLine, isUnitName, quoteExecArg, renderUnit} from '../../../src/lib/util/systemd-unit.js'
import {splitExecStart} from '../../support/systemd-exec.js'

describe('quoteExecArg', () => {
  it('leaves plain words alone', () => {
    expect(quoteExecArg('/usr/bin/node')).toBe('/usr/bin/node')
    expect(quoteExecArg('--runtime-endpoint')).toBe('--runtime-endpoint')
    expect(quoteExecArg('app=web')).toBe('app=web')
  })

  it('quotes a path with spaces, doubles $ and escapes quotes and backslashes', () => {
    expect(quoteExecArg('/srv/my manifests')).toBe('"/srv/my manifests"')
    expect(quoteExecArg('/srv/$HOME')).toBe('/srv/$$HOME')
    expect(quoteExecArg('a "b" c')).toBe(String.raw`"a \"b\" c"`)
    expect(quoteExecArg(String.raw`C:\x`)).toBe(String.raw`"C:\\x"`)
    expect(quoteExecArg("it's")).toBe(`"it's"`)
    expect(quoteExecArg('a;b')).toBe('"a;b"')
    expect(quoteExecArg('')).toBe('""')
    expect(quoteExecArg('line\nbreak\ttab')).toBe(String.raw`"line\nbreak\ttab"`)
  })
})

describe('execLine and renderUnit', () => {
  const tricky = ['/opt/pod ctl/node', '/srv/my manifests', 'x$y', '100%', 'a "b"', String.raw`back\slash`, "it's", '', 'new\nline']

  it('round-trips every argument through systemd’s splitting (quotes, $$, %%, C escapes)', () => {
    const unit = renderUnit({header: [], sections: [{name: 'Service', entries: [{key: 'ExecStart', value: execLine(tricky)}]}]})
    const line = /^ExecStart=(.*)$/m.exec(unit)![1]
    expect(line).toBe(String.raw`"/opt/pod ctl/node" "/srv/my manifests" x$$y 100%% "a \"b\"" "back\\slash" "it's" "" "new\nline"`)
    expect(splitExecStart(line)).toEqual(tricky)
  })

  it('refuses a relative program', () => {
    expect(() => execLine(['node', 'x'])).toThrow('ExecStart needs an absolute program path, got "node"')
  })

  it('renders the header comment, the sections in order, repeated keys and comments above their line', () => {
    const unit = renderUnit({
      header: ['one', 'two\nlines'],
      sections: [
        {
          name: 'Unit',
          entries: [
            {key: 'Description', value: 'x %n'},
            {key: 'After', value: 'a.service'},
            {key: 'After', value: 'b.service'},
          ],
        },
        {name: 'Install', entries: [{key: 'WantedBy', value: 'multi-user.target', comment: 'why'}]},
      ],
    })
    expect(unit).toBe(`# one
# two lines

[Unit]
Description=x %%n
After=a.service
After=b.service

[Install]
# why
WantedBy=multi-user.target
`)
  })
})

describe('isUnitName', () => {
  it('takes names with one of the suffixes', () => {
    expect(isUnitName('containerd.service', ['service'])).toBe(true)
    expect(isUnitName('network-online.target', ['service', 'target'])).toBe(true)
    expect(isUnitName('containerd', ['service'])).toBe(false)
    expect(isUnitName('a b.service', ['service'])).toBe(false)
    expect(isUnitName('.service', ['service'])).toBe(false)
  })
})
