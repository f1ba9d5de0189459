import {existsSync, readdirSync, readFileSync} from 'node:fs'
import {dirname, join, relative} from 'node:path'
import {fileURLToPath} from 'node:url'

import {describe, expect, it} from 'vitest'

import {EXIT_CODE_DOCS} from '../../src/lib/errors.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
const read = (path: string) => readFileSync(join(root, path), 'utf8')
const readme = read('README.md')
const reference = read('docs/commands.md')
const pages = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((file) => file.endsWith('.md'))
    .map((file) => `docs/${file}`),
]

/** GitHub's heading anchors: lower case, punctuation other than - and _ dropped, spaces to -, repeats numbered. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>()
  const result = new Set<string>()
  for (const [, heading] of withoutCode(markdown).matchAll(/^#{1,6} (.+)$/gm)) {
    const slug = heading
      .trim()
      .toLowerCase()
      .replaceAll(/[^\p{L}\p{N} _-]/gu, '')
      .replaceAll(' ', '-')
    const count = seen.get(slug) ?? 0
    seen.set(slug, count + 1)
    result.add(count === 0 ? slug : `${slug}-${count}`)
  }

  return result
}

function withoutCode(markdown: string): string {
  return markdown.replaceAll(/^```[\s\S]*?^```$/gm, '').replaceAll(/`[^`\n]*`/g, (span) => (span.includes('](') ? '' : span))
}

describe('README stays true', () => {
  it('documents every exit code exactly as the code defines it', () => {
    for (const [code, name, meaning] of EXIT_CODE_DOCS) expect(readme).toContain(`| ${code} | \`${name}\` | ${meaning} |`)
  })

  it('has the two-command quick start that CI runs', () => {
    const ci = read('.ci/run')
    expect(readme).toContain('bash scripts/quickstart.sh')
    expect(readme).toContain('npm test ')
    expect(ci).toContain('bash scripts/quickstart.sh')
    expect(ci).toMatch(/^npm test$/m)
  })

  it('stays short enough to read in five minutes: the reference lives in docs/commands.md', () => {
    expect(Buffer.byteLength(readme)).toBeLessThanOrEqual(30_000)
    expect(readme).not.toContain('<!-- commands -->')
    expect(readme).toContain('](docs/commands.md)')
  })
})

describe('docs/commands.md stays true', () => {
  it('has a reference entry for every command', () => {
    const commands = readdirSync(join(root, 'src/commands')).map((file) => file.replace(/\.ts$/, ''))
    expect(commands.length).toBeGreaterThan(10)
    for (const command of commands) expect(reference).toMatch(new RegExp(`^## \`podctl ${command}\\b`, 'm'))
  })

  it('is what `npm run readme` writes: one block between the markers', () => {
    expect(reference.match(/^<!-- commands -->$/gm)).toHaveLength(1)
    expect(reference.match(/^<!-- commandsstop -->$/gm)).toHaveLength(1)
    expect(read('package.json')).toContain('oclif readme --no-aliases --readme-path docs/commands.md')
  })
})

/** The relative links of a page, resolved against the repository root. */
function links(page: string): Array<{anchor?: string; file: string; target: string}> {
  return [...withoutCode(read(page)).matchAll(/\]\(([^)\s]+)\)/g)]
    .map(([, target]) => target)
    .filter((target) => !/^[a-z]+:/.test(target))
    .map((target) => {
      const [path, anchor] = target.split('#')
      return {anchor, file: path === '' ? page : relative(root, join(root, dirname(page), path)), target}
    })
}

describe('links between the README and docs/', () => {
  it('leaves no page of docs/ unlinked: each is reached from the README or another page', () => {
    const linked = new Set(
      pages.flatMap((page) =>
        links(page)
          .filter(({file}) => file !== page)
          .map(({file}) => file),
      ),
    )
    expect(pages.filter((page) => page !== 'README.md' && !linked.has(page))).toEqual([])
  })

  it.each(pages)('%s links only to files and headings that exist', (page) => {
    const broken: string[] = []
    for (const {anchor, file, target} of links(page)) {
      if (!existsSync(join(root, file))) broken.push(`${target}: no file ${file}`)
      else if (anchor !== undefined && file.endsWith('.md') && !anchors(read(file)).has(anchor))
        broken.push(`${target}: no heading in ${file}`)
    }

    expect(broken).toEqual([])
  })
})
