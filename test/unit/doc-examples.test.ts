import {mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, describe, expect, it} from 'vitest'

import {docBlocks, isPodctlLine, namespacesIn, renameNamespaces, shellExpectation} from '../support/doc-examples.js'

/** The extraction test/e2e/docs-examples.test.ts relies on: a wrong parse would skip or mangle examples unseen. */
const root = mkdtempSync(join(tmpdir(), 'podctl-doc-examples-'))
afterAll(() => rmSync(root, {recursive: true, force: true}))

describe('docBlocks', () => {
  it('gives each fence its language, lines, and the not-run marker right before it', () => {
    mkdirSync(join(root, 'docs'))
    const doc = [
      '# Title',
      '',
      '```sh',
      'podctl pods',
      '```',
      '',
      '<!-- not-run: needs a terminal -->',
      '',
      '```sh',
      'podctl ui',
      '```',
      'text, then a bare fence',
      '```',
      'output',
      '```',
    ].join('\n')
    writeFileSync(join(root, 'docs', 'page.md'), doc)
    expect(docBlocks(root, 'docs/page.md')).toEqual([
      {where: 'docs/page.md:3', lang: 'sh', lines: ['podctl pods'], firstLine: 4, notRun: undefined},
      {where: 'docs/page.md:9', lang: 'sh', lines: ['podctl ui'], firstLine: 10, notRun: 'needs a terminal'},
      {where: 'docs/page.md:13', lang: '', lines: ['output'], firstLine: 14, notRun: undefined},
    ])
  })

  it('refuses a fence that is never closed, naming the line', () => {
    writeFileSync(join(root, 'docs', 'open.md'), 'intro\n```sh\npodctl pods\n')
    expect(() => docBlocks(root, 'docs/open.md')).toThrow('docs/open.md:2: a fence that is never closed')
  })
})

describe('namespaces', () => {
  it('finds the namespaces a text names, not globs', () => {
    const text =
      "podctl logs -n demo web/server\npodctl pods --namespace=shop\npodctl pods -n 'web*'\nmetadata: {name: web, namespace: smoke}"
    expect(namespacesIn(text)).toEqual(['demo', 'shop', 'smoke'])
  })

  it('renames them where they name a namespace, and nowhere else', () => {
    const renames = new Map([
      ['demo', 'demo-1a2b3c'],
      ['smoke', 'smoke-4d5e6f'],
    ])
    expect(renameNamespaces('podctl kill web -n demo  # demo stays in words', renames)).toBe(
      'podctl kill web -n demo-1a2b3c  # demo stays in words',
    )
    expect(renameNamespaces('podctl pods --namespace=demo', renames)).toBe('podctl pods --namespace=demo-1a2b3c')
    expect(renameNamespaces("  namespace: 'smoke'\n  name: demo", renames)).toBe("  namespace: 'smoke-4d5e6f'\n  name: demo")
    expect(renameNamespaces('podctl pods -n other', renames)).toBe('podctl pods -n other')
  })
})

describe('shell lines', () => {
  it('expect exit 0 unless the comment starts with exit N, and know the ones that run until Ctrl-C', () => {
    expect(shellExpectation('podctl status   # the runtime (exit 7 if not ready)')).toEqual({exitCode: 0, untilCtrlC: false})
    expect(shellExpectation('podctl run -f bad.yaml   # exit 3: the field is named')).toEqual({exitCode: 3, untilCtrlC: false})
    expect(shellExpectation('podctl sync --all --watch   # supervise until Ctrl-C')).toEqual({exitCode: 0, untilCtrlC: true})
  })

  it('are podctl commands, or piped into one', () => {
    expect(isPodctlLine('podctl pods')).toBe(true)
    expect(isPodctlLine('$ podctl pods')).toBe(true)
    expect(isPodctlLine('echo piped | podctl exec -i web/app -- cat')).toBe(true)
    expect(isPodctlLine('systemctl enable --now podctl')).toBe(false)
    expect(isPodctlLine('curl -s 127.0.0.1:9100/metrics # | podctl x')).toBe(false)
  })
})
