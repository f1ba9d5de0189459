import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {loadConfig, locateConfig, parseConfig, parseFlatYaml} from '../../../src/lib/cri/config.js'
import {parseDuration} from '../../../src/lib/util/duration.js'
import {UsageError} from '../../../src/lib/errors.js'

describe('crictl config file', () => {
  it('reads the keys crictl writes', async () => {
    const config = await parseConfig(
      [
        '# written by crictl config',
        'runtime-endpoint: unix:///run/containerd/containerd.sock',
        'image-endpoint: "unix:///img.sock"',
        'timeout: 5',
        'debug: true',
        'pull-image-on-create: false',
      ].join('\n'),
      '/etc/crictl.yaml',
    )
    expect(config).toEqual({
      path: '/etc/crictl.yaml',
      runtimeEndpoint: 'unix:///run/containerd/containerd.sock',
      imageEndpoint: 'unix:///img.sock',
      timeoutMs: 5000,
      debug: true,
      pullImageOnCreate: false,
    })
  })

  it('accepts duration strings and treats 0 as the default', async () => {
    expect((await parseConfig('timeout: 1m30s', 'f')).timeoutMs).toBe(90_000)
    expect((await parseConfig('timeout: 0', 'f')).timeoutMs).toBeUndefined()
  })

  it('ignores unknown keys and empty values', async () => {
    expect(await parseConfig('runtime-endpoint:\nfuture-key: 1\n', 'f')).toEqual({path: 'f'})
  })

  it('falls back to the YAML parser for non-flat documents and names the file on errors', async () => {
    expect(parseFlatYaml('a:\n  b: c')).toBeUndefined()
    await expect(parseConfig('runtime-endpoint: [1, 2', 'bad.yaml')).rejects.toThrow(/bad.yaml is not valid YAML/)
    await expect(parseConfig('- a\n- b', 'list.yaml')).rejects.toThrow(/list.yaml must be a YAML mapping/)
    await expect(parseConfig('timeout: soon', 't.yaml')).rejects.toThrow(/t.yaml: "timeout" must be/)
    await expect(parseConfig('debug: 3', 'd.yaml')).rejects.toThrow(UsageError)
  })

  it('locates the file: --config, then CRI_CONFIG_FILE, then /etc/crictl.yaml', () => {
    expect(locateConfig('/x.yaml', {CRI_CONFIG_FILE: '/y.yaml'})).toEqual({path: '/x.yaml', explicit: true})
    expect(locateConfig(undefined, {CRI_CONFIG_FILE: '/y.yaml'})).toEqual({path: '/y.yaml', explicit: true})
    expect(locateConfig(undefined, {})).toEqual({path: '/etc/crictl.yaml', explicit: false})
  })

  it('a missing default file is fine, a missing named file is a usage error', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'podctl-config-'))
    expect(await loadConfig({path: join(dir, 'none.yaml'), explicit: false})).toBeUndefined()
    await expect(loadConfig({path: join(dir, 'none.yaml'), explicit: true})).rejects.toThrow(
      /cannot read config file .*none.yaml: no such file/,
    )
    writeFileSync(join(dir, 'c.yaml'), 'runtime-endpoint: /run/x.sock\n')
    expect((await loadConfig({path: join(dir, 'c.yaml'), explicit: true}))?.runtimeEndpoint).toBe('/run/x.sock')
  })
})

describe('parseDuration', () => {
  it.each([
    ['10s', 10_000],
    ['500ms', 500],
    ['2m', 120_000],
    ['1h2m3s', 3_723_000],
    ['1.5s', 1500],
    ['3', 3000],
  ])('%s → %d ms', (text, ms) => expect(parseDuration(text)).toBe(ms))

  it.each(['', 'soon', '10x', '-1s', 's'])('rejects %j', (text) => expect(parseDuration(text)).toBeUndefined())
})
