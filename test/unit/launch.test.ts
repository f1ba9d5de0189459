import {describe, expect, it} from 'vitest'

import {bundleId, cacheHeader, compileBundle, parseCache, userCacheDir} from '../../src/launch.js'

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

  it('keeps per-user caches under XDG_CACHE_HOME, else ~/.cache', () => {
    expect(userCacheDir({XDG_CACHE_HOME: '/x/cache', HOME: '/home/u'})).toBe('/x/cache/podctl')
    expect(userCacheDir({HOME: '/home/u'})).toBe('/home/u/.cache/podctl')
  })
})
