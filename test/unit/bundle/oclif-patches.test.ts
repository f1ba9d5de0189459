import {mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {createRequire} from 'node:module'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {
  COMPARE_IDS,
  LAZY_MODULE,
  LAZY_REQUIRES,
  lazyRequire,
  oclifPatches,
  PATCHES,
  RENDER_HELP_TEXT,
} from '../../../scripts/bundle/oclif-patches.mjs'

// eslint-disable-next-line no-new-func -- the test evaluates the exact source text the bundle patch injects
const compareIds = new Function(`${COMPARE_IDS}\nreturn __podctlCompareIds`)() as (a: string, b: string) => number
// eslint-disable-next-line no-new-func -- likewise for the lazy-module helper
const lazyModule = new Function(`${LAZY_MODULE}\nreturn __podctlLazyModule`)() as <T extends object>(load: () => T) => T
// ejs is oclif's dependency, not podctl's: the one oclif's help loads.
const ejs = createRequire(createRequire(import.meta.url).resolve('@oclif/core/package.json'))('ejs') as {
  render(template: string, data: object): string
}
// eslint-disable-next-line no-new-func -- likewise for the help template's render
const renderHelpText = new Function('ejs_1', 'context', 't', `return ${RENDER_HELP_TEXT}`) as (
  ejs_1: {default: typeof ejs},
  context: object,
  t: string,
) => string
const oclifLib = join(dirname(createRequire(import.meta.url).resolve('@oclif/core/package.json')), 'lib')

describe("the bundle's oclif patches", () => {
  it('each find the exact text they replace, once, in the installed @oclif/core', () => {
    for (const [file, patches] of Object.entries(PATCHES)) {
      const source = readFileSync(join(oclifLib, file), 'utf8')
      for (const [find] of patches) expect(source.split(find).length - 1, `${file}: ${find}`).toBe(1)
    }
  })

  it('find each lazy require once in the installed @oclif/core, and refuse a file where it is gone', () => {
    for (const [file, specifiers] of Object.entries(LAZY_REQUIRES)) {
      let source = readFileSync(join(oclifLib, file), 'utf8')
      for (const specifier of specifiers) {
        source = lazyRequire(source, specifier, file)
        expect(source, `${file}: ${specifier}`).toMatch(/ = __podctlLazyModule\(\(\) => /)
      }
    }

    expect(lazyRequire('const a_1 = __importDefault(require("a"));\n', 'a', 'x.js')).toBe(
      'const a_1 = __podctlLazyModule(() => __importDefault(require("a")));\n',
    )
    expect(lazyRequire("const getType = require('get-type');\n", 'get-type', 'x.js')).toBe(
      "const getType = __podctlLazyModule(() => require('get-type'));\n",
    )
    expect(() => lazyRequire('const b = require("b");\n', 'a', 'x.js')).toThrow(/x\.js changed: expected one line requiring "a", found 0/)
    expect(() => lazyRequire('const a = require("a");\nvar c = require("a");\n', 'a', 'x.js')).toThrow(/found 2/)
  })

  it('load a lazy module when one of its properties is first read, once, and then behave as the module', () => {
    let loads = 0
    const module = lazyModule(() => {
      loads++
      return {default: {name: 'ejs'}, render: (template: string) => template.toUpperCase()}
    })
    expect(loads).toBe(0)
    expect(module.render('ok')).toBe('OK')
    expect(module.default.name).toBe('ejs')
    expect('render' in module).toBe(true)
    expect(Object.keys(module)).toEqual(['default', 'render'])
    expect(loads).toBe(1)
  })

  it('sort command ids exactly as localeCompare does, without ICU, for the characters ids are made of', () => {
    const alphabet = '_-:0123456789abcdefghijklmnopqrstuvwxyz'
    let seed = 12_345
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31
    const word = () => Array.from({length: 1 + Math.floor(random() * 6)}, () => alphabet[Math.floor(random() * alphabet.length)]).join('')
    for (let i = 0; i < 20_000; i++) {
      const a = word()
      const b = random() < 0.3 ? a + word() : word()
      expect(compareIds(a, b), `${a} vs ${b}`).toBe(Math.sign(a.localeCompare(b)))
    }

    const ids = ['status', 'pods', 'run', 'images:list', 'images', 'image-rm', 'ps', 'x_y', 'p2', 'p:2']
    expect([...ids].sort(compareIds)).toEqual([...ids].sort((a, b) => a.localeCompare(b)))
  })

  it('leave any other id to localeCompare', () => {
    expect(compareIds('Pods', 'pods')).toBe(Math.sign('Pods'.localeCompare('pods')))
    expect(compareIds('é', 'f')).toBe(Math.sign('é'.localeCompare('f')))
  })

  it('render help text exactly as ejs does, calling ejs only for text with a delimiter in it', () => {
    const context = {config: {bin: 'podctl'}}
    let calls = 0
    const counting = {
      default: {
        ...ejs,
        render(t: string, data: object) {
          calls++
          return ejs.render(t, data)
        },
      },
    } as unknown as {
      default: typeof ejs
    }
    const alphabet = ['<', '%', '>', '-', '_', '=', '#', ' ', 'a', '\\', '`', '$', '{', '}', '"', "'", '\n']
    let seed = 4242
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31
    let skipped = 0
    for (let i = 0; i < 5000; i++) {
      const text = Array.from({length: Math.floor(random() * 12)}, () => alphabet[Math.floor(random() * alphabet.length)]).join('')
      let expected: string | Error
      try {
        expected = ejs.render(text, context)
      } catch (error) {
        expected = error as Error
      }

      const before = calls
      if (expected instanceof Error) expect(() => renderHelpText(counting, context, text), JSON.stringify(text)).toThrow()
      else expect(renderHelpText(counting, context, text), JSON.stringify(text)).toBe(expected)
      if (calls === before) skipped++
    }

    // A closing delimiter alone is dropped by ejs ("a %> b" is "a  b"): such text must still go through ejs.
    expect(renderHelpText(counting, context, 'a %> b')).toBe('a  b')
    expect(renderHelpText(counting, context, 'see <%= config.bin %> pods')).toBe('see podctl pods')
    expect(renderHelpText(counting, context, 'CPU % of a core\n  100% busy')).toBe('CPU % of a core\n  100% busy')
    expect(skipped).toBeGreaterThan(1000)
  })

  it('read JSON files through util/fs.js exactly as oclif does, without loading node:fs/promises', async () => {
    type FsModule = {readJson(path: string, useCache?: boolean): Promise<unknown>; safeReadJson(path: string): Promise<unknown>}
    const file = join(oclifLib, 'util', 'fs.js')
    const original = readFileSync(file, 'utf8')
    const {transform} = oclifPatches() as unknown as {transform: {handler(code: string, id: string): {code: string}}}
    const patched = transform.handler(original, file).code
    expect(patched).not.toBe(original)
    const load = (code: string): {module: FsModule; required: string[]} => {
      const required: string[] = []
      const real = createRequire(file)
      const exports = {}
      const fakeRequire = (id: string) => {
        required.push(id)
        return real(id)
      }

      // eslint-disable-next-line no-new-func -- evaluates oclif's module text, patched and not, as Node would
      new Function('exports', 'require', 'module', code)(exports, fakeRequire, {exports})
      return {module: exports as FsModule, required}
    }

    const before = load(original)
    const after = load(patched)
    const dir = mkdtempSync(join(tmpdir(), 'podctl-oclif-fs-'))
    try {
      writeFileSync(join(dir, 'theme.json'), '{"bin": "cyan", "flag": "#ff0000"}')
      writeFileSync(join(dir, 'broken.json'), '{"bin": ')
      mkdirSync(join(dir, 'directory.json'))
      const outcome = (promise: Promise<unknown>) =>
        promise.then(
          (value) => ({value}),
          (error: NodeJS.ErrnoException) => ({error: [error.constructor.name, error.message, error.code, error.syscall, error.path]}),
        )
      for (const name of ['theme.json', 'broken.json', 'directory.json', 'missing.json']) {
        const path = join(dir, name)
        expect(await outcome(after.module.readJson(path, false)), name).toEqual(await outcome(before.module.readJson(path, false)))
        expect(await outcome(after.module.safeReadJson(path)), name).toEqual(await outcome(before.module.safeReadJson(path)))
      }
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }

    expect(before.required).toContain('node:fs/promises')
    expect(after.required).not.toContain('node:fs/promises')
  })
})
