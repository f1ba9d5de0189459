import {readdirSync, readFileSync} from 'node:fs'

import {describe, expect, it} from 'vitest'

import {EXIT_CODE_DOCS} from '../../src/lib/errors.js'

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8')
// The command reference is generated into its own page (npm run readme), not into the README.
const reference = readFileSync(new URL('../../docs/commands.md', import.meta.url), 'utf8')

describe('README stays true', () => {
  it('documents every exit code exactly as the code defines it', () => {
    for (const [code, name, meaning] of EXIT_CODE_DOCS) expect(readme).toContain(`| ${code} | \`${name}\` | ${meaning} |`)
  })

  it('has a reference entry for every command', () => {
    const commands = readdirSync(new URL('../../src/commands', import.meta.url)).map((file) => file.replace(/\.ts$/, ''))
    expect(commands.length).toBeGreaterThan(10)
    for (const command of commands) expect(reference).toMatch(new RegExp(`^## \`podctl ${command}\\b`, 'm'))
  })

  it('has the two-command quick start that CI runs', () => {
    const ci = readFileSync(new URL('../../.ci/run', import.meta.url), 'utf8')
    expect(readme).toContain('bash scripts/quickstart.sh')
    expect(readme).toContain('npm test ')
    expect(ci).toContain('bash scripts/quickstart.sh')
    expect(ci).toMatch(/^npm test$/m)
  })
})
