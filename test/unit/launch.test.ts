import {describe, expect, it, vi} from 'vitest'

import {
  bundleId,
  type BundleSource,
  cacheGroup,
  cacheHeader,
  compileBundle,
  FULL_BUNDLE,
  GLOBAL_VALUE_FLAGS,
  launch,
  LEFT_OUT_KEY,
  parseCache,
  QUICK_BUNDLE,
  QUICK_GROUPS,
  shippedCacheName,
  startsQuick,
  userCacheDir,
} from '../../src/launch.js'
import {GLOBAL_FLAGS} from '../../src/lib/util/argv.js'
import {trainingGroups} from '../support/training.js'
import {CACHE_GROUPS, cacheFile} from '../../scripts/bundle/train.mjs'

const SOURCE = `// podctl-bundle 0123abcd
(function (exports, require, module, __filename, __dirname) {
  exports.run = async (argv) => argv.map((arg) => arg.toUpperCase())
  exports.execute = exports.run
  exports.where = __filename
})`

describe('launch: the bundle and its code caches', () => {
  it('reads the bundle id from the first line, and refuses a file without one', () => {
    expect(bundleId(SOURCE)).toBe('0123abcd')
    expect(() => bundleId('(function () {})')).toThrow(/not a podctl bundle/)
  })

  it('compiles and evaluates the bundle as a CommonJS module; a cache from it is accepted next time', async () => {
    const first = compileBundle(SOURCE, '/opt/podctl/podctl.cjs')
    expect(first.cacheAccepted).toBe(false)
    expect(await first.exports.run(['pods'], '/opt/podctl')).toEqual(['PODS'])
    expect((first.exports as unknown as {where: string}).where).toBe('/opt/podctl/podctl.cjs')
    const cache = first.script.createCachedData()
    expect(compileBundle(SOURCE, '/opt/podctl/podctl.cjs', cache).cacheAccepted).toBe(true)
  })

  it('takes a cache only for the same bundle, Node version and arch', () => {
    const data = Buffer.from('v8 data\nwith newlines')
    const file = Buffer.concat([Buffer.from(cacheHeader('0123abcd', ['ps', 'pods', 'ps'])), data])
    expect(cacheHeader('0123abcd', ['ps', 'pods', 'ps'])).toBe(`podctl-cache 0123abcd ${process.version} ${process.arch} pods,ps\n`)
    expect(parseCache(file, '0123abcd')).toEqual({data, commands: ['pods', 'ps']})
    expect(parseCache(file, 'ffff')).toBeUndefined()
    expect(parseCache(Buffer.from(file.toString('latin1').replace(process.version, 'v18.0.0'), 'latin1'), '0123abcd')).toBeUndefined()
    expect(parseCache(data, '0123abcd')).toBeUndefined()
    expect(parseCache(undefined, '0123abcd')).toBeUndefined()
    expect(parseCache(Buffer.from(cacheHeader('0123abcd', [])), '0123abcd')?.commands).toEqual([])
  })

  it("picks the shipped cache by the invocation's command, help in any spelling, skipping global flags and their values", () => {
    expect(cacheGroup(['pods'])).toBe('pods')
    expect(cacheGroup(['pods', '-o', 'json', '--namespace', 'ps'])).toBe('pods')
    expect(cacheGroup(['-r', 'unix:///run/x.sock', 'ps', '-a'])).toBe('ps')
    expect(cacheGroup(['--runtime-endpoint', 'status', 'ps'])).toBe('ps')
    expect(cacheGroup(['--runtime-endpoint=unix:///x', '-D', 'status'])).toBe('status')
    expect(cacheGroup(['--timeout', '5s', '-c', '/etc/crictl.yaml', 'images'])).toBe('images')
    expect(cacheGroup([])).toBe('help')
    expect(cacheGroup(['--help'])).toBe('help')
    expect(cacheGroup(['--version'])).toBe('help')
    expect(cacheGroup(['help', 'pods'])).toBe('help')
    expect(cacheGroup(['h'])).toBe('help')
    expect(cacheGroup(['ps', '-h'])).toBe('help')
    expect(cacheGroup(['exec', 'c1', '--', 'sh', '--help'])).toBe('exec')
    expect(cacheGroup(['../odd'])).toBe('other')
  })

  it('knows every global flag that takes a value, and trains a cache for each group it names', () => {
    const valueFlags = GLOBAL_FLAGS.filter((flag) => flag.value).flatMap((flag) => [
      `--${flag.name}`,
      ...(flag.char ? [`-${flag.char}`] : []),
    ])
    expect([...GLOBAL_VALUE_FLAGS].sort()).toEqual(valueFlags.sort())
    const groups = trainingGroups('/run/fixture.sock')
    expect(Object.keys(groups).sort()).toEqual([...CACHE_GROUPS].sort())
    for (const [group, runs] of Object.entries(groups)) for (const argv of runs) expect(cacheGroup(argv), argv.join(' ')).toBe(group)
    // The build writes each cache under the name the launcher reads.
    for (const group of [undefined, ...CACHE_GROUPS])
      expect(cacheFile('/dist/bundle', group)).toBe(`/dist/bundle/${shippedCacheName(group)}`)
  })

  it('starts from the quick bundle for the quick groups, and for help on no command or on one of theirs', () => {
    expect([...QUICK_GROUPS].sort()).toEqual([...CACHE_GROUPS].sort())
    for (const argv of Object.values(trainingGroups('/run/fixture.sock')).flat()) expect(startsQuick(argv), argv.join(' ')).toBe(true)
    const quick = [['pods', '-o', 'json'], ['-r', 'unix:///x', 'ps', '-a'], ['--help'], ['help'], ['help', 'images'], ['status', '-h'], []]
    for (const argv of quick) expect(startsQuick(argv), argv.join(' ')).toBe(true)
    // Every command's help loads its class (flags with computed help): only the full bundle has run's.
    const full = [
      ['run', '-f', 'pod.yaml'],
      ['run', '--help'],
      ['help', 'run'],
      ['h', 'inspect'],
      ['inspect', 'pod', 'x'],
      ['-r', 'pods', 'run'],
    ]
    for (const argv of full) expect(startsQuick(argv), argv.join(' ')).toBe(false)
  })

  it('runs the full bundle when the quick one answers that it left the command out, and only then', async () => {
    const ran: string[] = []
    const fake = (name: string, leftOut: string[]) => ({
      filename: `/opt/podctl/${name}`,
      source: `// podctl-bundle ${name === QUICK_BUNDLE ? 'aaaa' : 'bbbb'}
(function (exports) {
  exports.execute = async (argv) => {
    if (${JSON.stringify(leftOut)}.includes(argv[0])) return Symbol.for(${JSON.stringify(LEFT_OUT_KEY)})
    globalThis.launchTestRuns.push(${JSON.stringify(name)} + ' ' + argv.join(' '))
  }
  exports.run = exports.execute
})`,
    })
    const bundles: Record<string, BundleSource> = {[QUICK_BUNDLE]: fake(QUICK_BUNDLE, ['version']), [FULL_BUNDLE]: fake(FULL_BUNDLE, [])}
    Object.assign(globalThis, {launchTestRuns: ran})
    const exit = vi.spyOn(process, 'exit').mockImplementation(() => undefined as never)
    try {
      const start = (argv: string[]) =>
        launch({readBundle: (name) => bundles[name], root: '/opt/podctl', argv, env: {PODCTL_CODE_CACHE: '0'}})
      await start(['pods', '-q'])
      await start(['run', '-f', 'pod.yaml'])
      // A guess that was wrong: the quick bundle left version out, so the full one runs it.
      await start(['version'])
    } finally {
      exit.mockRestore()
    }

    expect(ran).toEqual([`${QUICK_BUNDLE} pods -q`, `${FULL_BUNDLE} run -f pod.yaml`, `${FULL_BUNDLE} version`])
  })

  it('keeps per-user caches under XDG_CACHE_HOME, else ~/.cache', () => {
    expect(userCacheDir({XDG_CACHE_HOME: '/x/cache', HOME: '/home/u'})).toBe('/x/cache/podctl')
    expect(userCacheDir({HOME: '/home/u'})).toBe('/home/u/.cache/podctl')
  })
})
