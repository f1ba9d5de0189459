import {describe, expect, it} from 'vitest'

import {BaseCommand} from '../../../src/lib/base-command.js'
import {commandWords, GLOBAL_FLAGS, normalizeArgv} from '../../../src/lib/util/argv.js'

describe('normalizeArgv: crictl habits before oclif parses', () => {
  it('moves global flags from before the command to behind it, spelled long', () => {
    expect(normalizeArgv(['-r', 'unix:///run/x.sock', 'ps', '-a'])).toEqual(['ps', '--runtime-endpoint=unix:///run/x.sock', '-a'])
    expect(normalizeArgv(['-D', 'version'])).toEqual(['version', '--debug'])
    expect(normalizeArgv(['-t', '5s', 'pods'])).toEqual(['pods', '--timeout=5s'])
    expect(normalizeArgv(['-c', 'crictl.yaml', '-i', '/img.sock', 'images'])).toEqual([
      'images',
      '--config=crictl.yaml',
      '--image-endpoint=/img.sock',
    ])
    expect(normalizeArgv(['--connect-timeout', '1s', '--no-color', '--json', 'pods'])).toEqual([
      'pods',
      '--connect-timeout=1s',
      '--no-color',
      '--json',
    ])
  })

  it('takes the value forms crictl takes: -r=X, -rX, --runtime-endpoint=X', () => {
    expect(normalizeArgv(['-r=/a.sock', 'ps'])).toEqual(['ps', '--runtime-endpoint=/a.sock'])
    expect(normalizeArgv(['-r/a.sock', 'ps'])).toEqual(['ps', '--runtime-endpoint=/a.sock'])
    expect(normalizeArgv(['--runtime-endpoint=/a.sock', 'ps'])).toEqual(['ps', '--runtime-endpoint=/a.sock'])
  })

  it('never mistakes a flag value for the command', () => {
    // "ps" here is the value of --timeout, not the command: oclif then reports the bad duration.
    expect(normalizeArgv(['-t', 'ps', 'pods'])).toEqual(['pods', '--timeout=ps'])
    expect(normalizeArgv(['-r', 'version'])).toEqual(['--help'])
  })

  it('leaves flags after the command alone (ps -r is --resolve-image-path there)', () => {
    expect(normalizeArgv(['ps', '-r', '-a'])).toEqual(['ps', '-r', '-a'])
    expect(normalizeArgv(['exec', 'c1', '--', 'sh', '-c', 'x'])).toEqual(['exec', 'c1', '--', 'sh', '-c', 'x'])
  })

  it('keeps global flags before a -- and the command line after it', () => {
    expect(normalizeArgv(['-D', 'exec', 'c1', '--', 'sh', '-t'])).toEqual(['exec', '--debug', 'c1', '--', 'sh', '-t'])
  })

  it('help [COMMAND], -h before the command, -v and nothing', () => {
    expect(normalizeArgv(['help'])).toEqual(['--help'])
    expect(normalizeArgv(['help', 'pull'])).toEqual(['pull', '--help'])
    expect(normalizeArgv(['h', 'ps'])).toEqual(['ps', '--help'])
    expect(normalizeArgv(['-h'])).toEqual(['--help'])
    expect(normalizeArgv(['-h', 'pull'])).toEqual(['pull', '--help'])
    expect(normalizeArgv(['pull', '-h'])).toEqual(['pull', '-h'])
    expect(normalizeArgv(['-v'])).toEqual(['-v'])
    expect(normalizeArgv(['--version'])).toEqual(['--version'])
    expect(normalizeArgv([])).toEqual([])
  })

  it("renames crictl's inspectp and inspecti to inspect of a pod or an image", () => {
    expect(normalizeArgv(['inspectp', 'abc'])).toEqual(['inspect', 'pod', 'abc'])
    expect(normalizeArgv(['-r', '/a.sock', 'inspecti', 'busybox'])).toEqual(['inspect', '--runtime-endpoint=/a.sock', 'image', 'busybox'])
  })

  it('leaves an unknown leading flag where it is, for oclif to report', () => {
    expect(normalizeArgv(['--bogus', 'ps'])).toEqual(['--bogus', 'ps'])
    expect(normalizeArgv(['-D=1', 'ps'])).toEqual(['-D=1', 'ps'])
  })

  it("with the commands known, moves a command's own flags from before it to behind it, values included", () => {
    const commands = commandWords({commands: {pods: {}, ps: {aliases: ['containers']}, logs: {}}})
    expect(normalizeArgv(['-r', 'EP', '--pod-dir-root', 'DIR', 'pods'], commands)).toEqual([
      'pods',
      '--runtime-endpoint=EP',
      '--pod-dir-root',
      'DIR',
    ])
    expect(normalizeArgv(['--pod-dir-root=DIR', '-r', 'EP', 'pods', '-q'], commands)).toEqual([
      'pods',
      '--pod-dir-root=DIR',
      '--runtime-endpoint=EP',
      '-q',
    ])
    expect(normalizeArgv(['-n', 'demo', 'logs', 'web/server'], commands)).toEqual(['logs', '-n', 'demo', 'web/server'])
    // A command word right after a flag is the command: the flag takes no value.
    expect(normalizeArgv(['--all', 'containers', 'web'], commands)).toEqual(['containers', '--all', 'web'])
    // The last word is the command even when mistyped, for oclif to report by its name.
    expect(normalizeArgv(['--all', 'pdos'], commands)).toEqual(['pdos', '--all'])
    // No command at all, and -v/--version: as typed.
    expect(normalizeArgv(['--bogus'], commands)).toEqual(['--bogus'])
    expect(normalizeArgv(['--pod-dir-root', '/tmp'], commands)).toEqual(['--pod-dir-root', '/tmp'])
    expect(normalizeArgv(['-v', 'ps'], commands)).toEqual(['-v', 'ps'])
    expect(normalizeArgv(['help', 'ps'], commands)).toEqual(['ps', '--help'])
  })

  it('knows every flag BaseCommand has, with the same letters', () => {
    const base = Object.entries(BaseCommand.baseFlags).map(([name, flag]) => ({name, char: (flag as {char?: string}).char}))
    for (const {name, char} of base) {
      const global = GLOBAL_FLAGS.find((flag) => flag.name === name)
      expect(global, name).toBeDefined()
      if (char) expect(global?.char, name).toBe(char)
    }
  })
})
