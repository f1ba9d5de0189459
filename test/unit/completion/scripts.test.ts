import {execFileSync, spawnSync} from 'node:child_process'
import {describe, expect, it} from 'vitest'

import {bashScript, choicesInHelpValue, completionModel, type OclifCommandLike, zshScript} from '../../../src/lib/completion/scripts.js'

const globalFlags: OclifCommandLike['flags'] = {
  'runtime-endpoint': {char: 'r', summary: 'CRI runtime endpoint.', type: 'option'},
  config: {char: 'c', summary: "crictl config file [it's YAML].", type: 'option'},
  debug: {char: 'D', summary: 'Print each call.', type: 'boolean'},
  color: {summary: 'Colour output.', type: 'boolean', allowNo: true},
}

const commands: OclifCommandLike[] = [
  {
    id: 'logs',
    summary: "Print a container's logs.",
    flags: {
      ...globalFlags,
      follow: {char: 'f', summary: 'Follow.', type: 'boolean'},
      stream: {summary: 'Only this stream.', type: 'option', options: ['stdout', 'stderr']},
      tail: {summary: 'Last N lines.', type: 'option'},
      secret: {summary: 'Hidden.', type: 'boolean', hidden: true},
    },
    args: {container: {}},
  },
  {
    id: 'stats',
    summary: 'Show usage.',
    flags: {
      ...globalFlags,
      output: {char: 'o', summary: 'Format.', type: 'option', options: ['table', 'json']},
      label: {char: 'l', summary: 'Labels.', type: 'option', multiple: true},
    },
    args: {container: {}},
  },
  {id: 'exec', summary: 'Run a command.', strict: false, flags: {...globalFlags}, args: {container: {}}},
  {id: 'completion', summary: 'Completion.', flags: {...globalFlags}, args: {shell: {options: ['bash', 'zsh']}}},
  {id: 'internal', hidden: true, summary: 'Hidden.', flags: {}, args: {}},
]

const model = completionModel(commands)

/** Runs the bash script's completion function for a command line (the cursor at its end) and returns the candidates. */
function completeBash(line: string): string[] {
  const words = line.split(' ')
  const script = `${bashScript('podctl', model)}
COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')})
COMP_CWORD=${words.length - 1}
_podctl_complete
printf '%s\\n' "\${COMPREPLY[@]}"`
  const out = execFileSync('bash', ['-c', script], {encoding: 'utf8'})
  return out.split('\n').filter((w) => w !== '')
}

describe('completionModel', () => {
  it('leaves out hidden commands and flags, sorts, adds --help and marks variadic commands', () => {
    expect(model.map((c) => c.id)).toEqual(['completion', 'exec', 'logs', 'stats'])
    const logs = model.find((c) => c.id === 'logs')!
    expect(logs.flags.map((f) => f.name)).not.toContain('secret')
    expect(logs.flags.map((f) => f.name)).toContain('help')
    expect(model.find((c) => c.id === 'exec')!.variadic).toBe(true)
    expect(logs.variadic).toBe(false)
  })
})

describe('bash script', () => {
  it('is valid bash', () => {
    expect(spawnSync('bash', ['-n', '-c', bashScript('podctl', model)]).status).toBe(0)
  })

  it('completes commands', () => {
    expect(completeBash('podctl ')).toEqual(['completion', 'exec', 'logs', 'stats'])
    expect(completeBash('podctl st')).toEqual(['stats'])
  })

  it("completes a command's flags, global ones and --no-color included", () => {
    expect(completeBash('podctl logs --')).toEqual([
      '--color',
      '--config',
      '--debug',
      '--follow',
      '--help',
      '--no-color',
      '--runtime-endpoint',
      '--stream',
      '--tail',
    ])
    expect(completeBash('podctl stats -')).toContain('-o')
    expect(completeBash('podctl logs -')).not.toContain('-o')
  })

  it('completes fixed flag values and argument choices', () => {
    expect(completeBash('podctl logs --stream ')).toEqual(['stdout', 'stderr'])
    expect(completeBash('podctl stats -o j')).toEqual(['json'])
    expect(completeBash('podctl completion ')).toEqual(['bash', 'zsh'])
  })

  it('offers nothing for free values, files for --config', () => {
    expect(completeBash('podctl logs --tail ')).toEqual([])
    expect(completeBash('podctl logs -r ')).toEqual([])
    expect(completeBash('podctl stats -c /etc/host')).toContain('/etc/hostname')
  })
})

const hasZsh = spawnSync('zsh', ['--version']).status === 0

describe('zsh script', () => {
  const script = zshScript('podctl', model)

  it('declares the completion function and every command with its summary', () => {
    expect(script.startsWith('#compdef podctl\n')).toBe(true)
    expect(script).toContain(`'logs:Print a container'\\''s logs.'`)
    expect(script).not.toContain('internal')
    expect(script).toContain("'--stream=[Only this stream.]:stream:(stdout stderr)'")
    expect(script).toContain("'*-l+[Labels.]:label: '")
    expect(script).toContain(String.raw`'(-c --config)--config=[crictl config file \[it'\''s YAML\].]:config:_files'`)
    expect(script).toContain("'1:shell:(bash zsh)'")
    expect(script).toContain("'*::command:_normal'")
  })

  it.skipIf(!hasZsh)('is valid zsh', () => {
    expect(spawnSync('zsh', ['-n', '-c', script]).status).toBe(0)
  })
})

describe('choicesInHelpValue', () => {
  it("offers an -o flag's plain formats, which cannot be oclif options next to jsonpath=", () => {
    expect(choicesInHelpValue('table|wide|json|yaml|name|jsonpath=EXPR|go-template=TPL')).toEqual(['table', 'wide', 'json', 'yaml', 'name'])
    expect(choicesInHelpValue('table|json|yaml')).toEqual(['table', 'json', 'yaml'])
  })

  it('offers nothing for placeholders', () => {
    for (const value of [undefined, 'FILE|-', 'DURATION|TIME', 'USER[:PASSWORD]', 'DIR', 'json']) {
      expect(choicesInHelpValue(value)).toBeUndefined()
    }
  })

  it('completes -o from the help value in the scripts', () => {
    const ps: OclifCommandLike = {
      id: 'ps',
      summary: 'List.',
      flags: {output: {char: 'o', summary: 'Format.', type: 'option', helpValue: 'table|wide|jsonpath=EXPR'}},
      args: {},
    }
    expect(completionModel([ps])[0].flags.find((flag) => flag.name === 'output')?.options).toEqual(['table', 'wide'])
  })
})
