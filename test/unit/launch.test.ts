import {describe, expect, it} from 'vitest'

import {
  bundleId,
  cacheGroup,
  cacheHeader,
  compileBundle,
  GLOBAL_VALUE_FLAGS,
  parseCache,
  shippedCacheName,
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

  it('keeps per-user caches under XDG_CACHE_HOME, else ~/.cache', () => {
    expect(userCacheDir({XDG_CACHE_HOME: '/x/cache', HOME: '/home/u'})).toBe('/x/cache/podctl')
    expect(userCacheDir({HOME: '/home/u'})).toBe('/home/u/.cache/podctl')
  })
})
