import {mkdtempSync, readFileSync, statSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {parseConfig} from '../../../src/lib/cri/config.js'
import {
  getConfig,
  listConfig,
  parseSets,
  readConfigText,
  setConfig,
  typedValue,
  writeConfigText,
} from '../../../src/lib/node/config-file.js'
import {UsageError} from '../../../src/lib/errors.js'

const FILE = `# written by hand
runtime-endpoint: unix:///run/containerd/containerd.sock
max-retries: 3 # a key of a newer crictl
timeout: 2
`

describe('config file editing (crictl config)', () => {
  it('sets keys and keeps the comments, the order and keys it does not know', async () => {
    const text = await setConfig(FILE, 'crictl.yaml', [
      ['timeout', '10'],
      ['debug', 'true'],
      ['image-endpoint', 'unix:///run/img.sock'],
    ])
    expect(text).toBe(`# written by hand
runtime-endpoint: unix:///run/containerd/containerd.sock
max-retries: 3 # a key of a newer crictl
timeout: 10
debug: true
image-endpoint: unix:///run/img.sock
`)
    // What it writes reads back through the loader every command uses.
    expect(await parseConfig(text, 'crictl.yaml')).toMatchObject({timeoutMs: 10_000, debug: true, imageEndpoint: 'unix:///run/img.sock'})
  })

  it('creates a file from nothing', async () => {
    expect(await setConfig('', 'x', [['runtime-endpoint', 'unix:///a.sock']])).toBe('runtime-endpoint: unix:///a.sock\n')
  })

  it("lists every key with crictl's defaults and gets one", async () => {
    expect(await listConfig(FILE, 'x')).toEqual([
      ['runtime-endpoint', 'unix:///run/containerd/containerd.sock'],
      ['image-endpoint', ''],
      ['timeout', '2'],
      ['debug', 'false'],
      ['pull-image-on-create', 'false'],
      ['disable-pull-on-run', 'false'],
    ])
    expect(await getConfig(FILE, 'x', 'timeout')).toBe('2')
    expect(await getConfig('', 'x', 'debug')).toBe('false')
  })

  it('refuses unknown keys, wrong values and bad --set forms, before writing', async () => {
    await expect(getConfig(FILE, 'x', 'nope')).rejects.toThrow(/config option "nope" is not valid; the keys are runtime-endpoint, /)
    await expect(setConfig(FILE, 'x', [['max-retries', '5']])).rejects.toBeInstanceOf(UsageError)
    expect(() => typedValue('timeout', '5s')).toThrow('config option "timeout" is a whole number of seconds, not "5s"')
    expect(() => typedValue('debug', 'yes')).toThrow('config option "debug" must be true or false, not "yes"')
    expect(() => parseSets(['debug'])).toThrow(/--set "debug" is not KEY=VALUE/)
    await expect(setConfig('- a\n- b\n', 'list.yaml', [['debug', 'true']])).rejects.toThrow(/config file list.yaml must be a YAML mapping/)
  })

  it('splits --set values on commas, as crictl does', () => {
    expect(parseSets(['timeout=5,debug=true', 'runtime-endpoint=unix:///a.sock'])).toEqual([
      ['timeout', '5'],
      ['debug', 'true'],
      ['runtime-endpoint', 'unix:///a.sock'],
    ])
  })

  it('writes the file with mode 0600, creating its directory', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'podctl-config-')), 'sub', 'crictl.yaml')
    expect(await readConfigText(path)).toBe('')
    await writeConfigText(path, 'debug: true\n')
    expect(readFileSync(path, 'utf8')).toBe('debug: true\n')
    expect(statSync(path).mode & 0o777).toBe(0o600)
  })
})
