import {UsageError} from '../errors.js'

/**
 * Name filters are exact unless they contain `*` (crictl's unanchored regexes make `--name web`
 * match `web2`, cri-tools#1810). `*` matches any run of characters, anchored at both ends. Globs are
 * matched part by part (the first part a prefix, the last a suffix, each one between at its
 * leftmost place), never through a backtracking regex: many stars against a long name answer at once.
 */
export function nameMatcher(pattern: string | undefined): (value: string) => boolean {
  if (pattern === undefined || pattern === '') return () => true
  if (!pattern.includes('*')) return (value) => value === pattern
  const parts = pattern.split('*')
  const first = parts[0]
  const last = parts.at(-1)!
  const middle = parts.slice(1, -1).filter((part) => part !== '')
  return (value) => {
    if (value.length < first.length + last.length || !value.startsWith(first) || !value.endsWith(last)) return false
    let at = first.length
    const end = value.length - last.length
    for (const part of middle) {
      const found = value.indexOf(part, at)
      if (found === -1 || found + part.length > end) return false
      at = found + part.length
    }

    return true
  }
}

/** The filters given exactly (no `*`), by flag name. */
export function exactFilters(filters: Readonly<Record<string, string | undefined>>): Array<[string, string]> {
  return Object.entries(filters).filter(
    (entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== '' && !entry[1].includes('*'),
  )
}

/** Each exact filter made the glob of names starting with it ('serv' → 'serv*'). */
export function prefixGlobs<T extends Record<string, string | undefined>>(filters: T): T {
  const globbed: Record<string, string | undefined> = {...filters}
  for (const [flag, value] of exactFilters(filters)) globbed[flag] = `${value}*`
  return globbed as T
}

/**
 * For a list that came back empty: a --name (or --namespace) without `*` matches whole names only,
 * which surprises anyone used to crictl's substring match. The hint names the globs, for the caller
 * to give only when listing with them (prefixGlobs) finds something: never a glob that matches
 * nothing, nor one made of a value that is no name at all (`--namespace ../etc`). Undefined when no
 * exact filter was given.
 */
export function exactNameHint(filters: Readonly<Record<string, string | undefined>>): string | undefined {
  const exact = exactFilters(filters)
  if (exact.length === 0) return undefined
  const names = exact.map(([flag]) => `--${flag}`).join(' and ')
  const globs = exact.map(([flag, value]) => `--${flag} '${value}*'`).join(' ')
  return `${names} ${exact.length === 1 ? 'matches' : 'match'} whole names only; to match names that start with it, use ${globs}`
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
