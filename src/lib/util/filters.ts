import {UsageError} from '../errors.js'

/**
 * Name filters are exact unless they contain `*` (crictl's unanchored regexes make `--name web`
 * match `web2`, cri-tools#1810). `*` matches any run of characters, anchored at both ends.
 */
export function nameMatcher(pattern: string | undefined): (value: string) => boolean {
  if (pattern === undefined || pattern === '') return () => true
  if (!pattern.includes('*')) return (value) => value === pattern
  const source = pattern
    .split('*')
    .map((part) => part.replaceAll(/[.+?^${}()|[\]\\]/g, String.raw`\$&`))
    .join('.*')
  const regex = new RegExp(`^${source}$`)
  return (value) => regex.test(value)
}

/** `-l a=b -l c=d` or `-l a=b,c=d` → {a: 'b', c: 'd'}; the runtime applies it server-side. */
export function parseLabelSelector(values: readonly string[] | undefined, flag = '--label'): Record<string, string> {
  const selector: Record<string, string> = {}
  for (const value of values ?? []) {
    for (const pair of value.split(',')) {
      if (pair.trim() === '') continue
      const eq = pair.indexOf('=')
      const key = eq > 0 ? pair.slice(0, eq).trim() : ''
      if (key === '') throw new UsageError(`${flag} "${pair}" must be KEY=VALUE, e.g. ${flag} app=web`)
      selector[key] = pair.slice(eq + 1).trim()
    }
  }

  return selector
}

/** Keeps the first `last` items (lists are newest first); --latest is --last 1. */
export function takeNewest<T>(items: T[], options: {latest?: boolean; last?: number}): T[] {
  const count = options.latest ? 1 : options.last
  return count !== undefined && count > 0 ? items.slice(0, count) : items
}
