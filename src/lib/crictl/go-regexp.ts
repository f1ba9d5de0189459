/**
 * Go's regexp for crictl's --name, --namespace and images --filter reference=: RE2 syntax and
 * semantics from re2js (a port of RE2/J, linear in the text whatever the pattern: `(a+)+$` against
 * a long name answers at once), unanchored as regexp.MatchString is. A pattern Go rejects is
 * crictl's error, `invalid regular expression "PAT": error parsing regexp: …`.
 */
import type {RE2JS} from 're2js'

export class GoRegexpError extends Error {}

/**
 * regexp.Compile: a matcher (find anywhere), or Go's error text. re2js is loaded with the first
 * pattern, not with the module: it is a large module and most listings filter by no name.
 */
export async function compileGoRegexp(pattern: string): Promise<(value: string) => boolean> {
  const re2js = await import('re2js')
  let compiled: RE2JS
  try {
    compiled = re2js.RE2JS.compile(pattern)
  } catch (error) {
    throw new GoRegexpError((error as Error).message)
  }

  return (value) => compiled.matcher(value).find()
}

/** crictl's compileRegex: no filter for an empty pattern, else the pattern or `invalid regular expression "…": …`. */
export async function crictlRegex(pattern: string | undefined): Promise<(value: string) => boolean> {
  if (!pattern) return () => true
  try {
    return await compileGoRegexp(pattern)
  } catch (error) {
    throw new GoRegexpError(`invalid regular expression ${JSON.stringify(pattern)}: ${(error as Error).message}`)
  }
}
