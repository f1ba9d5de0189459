import {execFileSync} from 'node:child_process'
import {mkdirSync, mkdtempSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {EnvFileError, parseEnvFile, readFileKey} from '../../../../src/lib/kubelet/core/env-file.js'
import {EnvReferenceError, makeEnvironmentVariables, PLACEHOLDER_NODE} from '../../../../src/lib/kubelet/core/env.js'
import type {ContainerModel, PodModel} from '../../../../src/lib/manifest/model.js'

const dir = mkdtempSync(join(tmpdir(), 'podctl-env-file-'))
const volume = join(dir, 'config')
mkdirSync(volume)
writeFileSync(
  join(volume, 'config.env'),
  '# written by the init container\nDB_HOST=db.local\nexport PORT="5432"\nQUOTED=\'a b\'\n\nEMPTY=\n',
)
const ref = (key: string, optional = false, path = 'config.env') => ({volumeName: 'config', path, key, optional})

describe('env files', () => {
  it('parses KEY=VALUE lines with comments, export and quotes', () => {
    expect(Object.fromEntries(parseEnvFile('A=1\n# c\n  B = two \nexport C="x\\"y"\nD=\'$E\'\n', 'f'))).toEqual({
      A: '1',
      B: 'two',
      C: 'x"y',
      D: '$E',
    })
    expect(() => parseEnvFile('A=1\nnot a line\n', 'env file "f"')).toThrow('env file "f": line 2 is not KEY=VALUE')
  })

  it('reads a key, leaves an optional one out, and fails a required one in the kubelet way', () => {
    expect(readFileKey(ref('DB_HOST'), volume)).toBe('db.local')
    expect(readFileKey(ref('PORT'), volume)).toBe('5432')
    expect(readFileKey(ref('EMPTY'), volume)).toBe('')
    expect(readFileKey(ref('MISSING', true), volume)).toBeUndefined()
    expect(readFileKey(ref('DB_HOST', true, 'none.env'), volume)).toBeUndefined()
    expect(() => readFileKey(ref('MISSING'), volume)).toThrow(
      new EnvFileError('couldn\'t find key MISSING in env file "config.env" in volume "config"'),
    )
    expect(() => readFileKey(ref('DB_HOST', false, 'none.env'), volume)).toThrow(
      'couldn\'t read env file "none.env" in volume "config": no such file',
    )
  })

  it('never reads outside the volume, nor blocks on a FIFO', () => {
    symlinkSync('/etc/passwd', join(volume, 'escape.env'))
    expect(() => readFileKey(ref('root', false, 'escape.env'), volume)).toThrow('leads out of its volume')
    execFileSync('mkfifo', [join(volume, 'fifo.env')])
    expect(() => readFileKey(ref('A', false, 'fifo.env'), volume)).toThrow('env file "fifo.env" is not a regular file')
  })

  it('makeEnvironmentVariables reads it when the volumes exist, and says where from before', () => {
    const container = {
      name: 'app',
      env: [
        {name: 'DB_HOST', value: '', valueFrom: {fileKeyRef: ref('DB_HOST')}},
        {name: 'URL', value: 'postgres://$(DB_HOST)'},
        {name: 'GONE', value: '', valueFrom: {fileKeyRef: ref('GONE', true)}},
      ],
    } as unknown as ContainerModel
    const pod = {name: 'p', namespace: 'ns', labels: {}, annotations: {}, containers: [container]} as unknown as PodModel
    const volumePaths = new Map([['config', volume]])
    expect(makeEnvironmentVariables(pod, container, {...PLACEHOLDER_NODE, podIPs: [], volumePaths}).env).toEqual([
      {name: 'DB_HOST', value: 'db.local'},
      {name: 'URL', value: 'postgres://db.local'},
    ])
    // Before the volumes exist (--dry-run): where the value will come from.
    expect(makeEnvironmentVariables(pod, container, {...PLACEHOLDER_NODE, podIPs: []}).env[0]).toEqual({
      name: 'DB_HOST',
      value: '<key DB_HOST of config.env in volume config, read at start>',
    })
    const missing = {...container, env: [{name: 'X', value: '', valueFrom: {fileKeyRef: ref('X')}}]} as unknown as ContainerModel
    expect(() => makeEnvironmentVariables(pod, missing, {...PLACEHOLDER_NODE, podIPs: [], volumePaths})).toThrow(EnvReferenceError)
  })
})
