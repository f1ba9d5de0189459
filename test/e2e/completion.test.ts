import {execFileSync, spawnSync} from 'node:child_process'
import {describe, expect, it} from 'vitest'

import {podctl} from '../support/podctl.js'

/** The runtime is never asked: completion works with no runtime at all. */
const env = {CONTAINER_RUNTIME_ENDPOINT: 'unix:///nonexistent/podctl.sock'}

function complete(script: string, line: string): string[] {
  const words = line.split(' ')
  const program = `${script}
COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')})
COMP_CWORD=${words.length - 1}
_podctl_complete
printf '%s\\n' "\${COMPREPLY[@]}"`
  return execFileSync('bash', ['-c', program], {encoding: 'utf8'}).split('\n').filter(Boolean)
}

describe('podctl completion', () => {
  it('bash: completes the real commands and their flags', async () => {
    const result = await podctl(['completion', 'bash'], {env})
    expect(result.code).toBe(0)
    expect(result.stderr).toBe('')
    expect(result.stdout).toContain('complete -F _podctl_complete podctl')
    expect(complete(result.stdout, 'podctl ')).toEqual(expect.arrayContaining(['completion', 'exec', 'logs', 'pods', 'stats', 'status']))
    expect(complete(result.stdout, 'podctl logs --f')).toEqual(['--follow'])
    expect(complete(result.stdout, 'podctl stats -o ')).toEqual(['table', 'json', 'yaml'])
    expect(complete(result.stdout, 'podctl logs --stream ')).toEqual(['stdout', 'stderr'])
  })

  it('defaults to bash', async () => {
    const [bare, bash] = await Promise.all([podctl(['completion'], {env}), podctl(['completion', 'bash'], {env})])
    expect(bare.stdout).toBe(bash.stdout)
  })

  it('zsh: a #compdef script zsh accepts', async () => {
    const result = await podctl(['completion', 'zsh'], {env})
    expect(result.code).toBe(0)
    expect(result.stdout.startsWith('#compdef podctl\n')).toBe(true)
    expect(result.stdout).toContain(String.raw`'logs:Print a container'\''s logs from its CRI log file.'`)
    if (spawnSync('zsh', ['--version']).status === 0) expect(spawnSync('zsh', ['-n', '-c', result.stdout]).status).toBe(0)
  })

  it('prints a fish script', async () => {
    const result = await podctl(['completion', 'fish'], {env})
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(/^# fish completion for podctl;/)
    expect(result.stdout).toContain("complete -c podctl -n '__fish_seen_subcommand_from ps' -l resolve-image-path -s r ")
  })

  it('rejects other shells with a usage error', async () => {
    const result = await podctl(['completion', 'tcsh'], {env})
    expect(result.code).toBe(2)
    expect(result.stderr).toContain('tcsh')
    expect(result.stdout).toBe('')
  })
})
