/**
 * Kubernetes' name and value rules (apimachinery validation), returning the API server's wording
 * so a manifest podctl refuses is one the API server would refuse too, for the same reason.
 * Each check returns undefined when valid, else the reason.
 */
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/
const ENV_VAR_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/
const IANA_SVC_NAME = /^[-a-z0-9]+$/

export function dns1123Label(value: string): string | undefined {
  if (value.length > 63) return 'must be no more than 63 characters'
  if (!DNS1123_LABEL.test(value)) {
    return (
      "must be a lowercase RFC 1123 label: lowercase letters, digits and '-', " +
      "starting and ending with a letter or digit (e.g. 'my-name')"
    )
  }

  return undefined
}

export function dns1123Subdomain(value: string): string | undefined {
  if (value.length > 253) return 'must be no more than 253 characters'
  if (!DNS1123_SUBDOMAIN.test(value)) {
    return (
      "must be a lowercase RFC 1123 subdomain: lowercase letters, digits, '-' and '.', " +
      "starting and ending with a letter or digit (e.g. 'example.com')"
    )
  }

  return undefined
}

/** Label and annotation keys: an optional DNS subdomain prefix and "/", then a name of at most 63 characters. */
export function qualifiedName(value: string): string | undefined {
  const parts = value.split('/')
  if (parts.length > 2) return "must be a name with at most one '/' (an optional DNS subdomain prefix, e.g. 'example.com/my-name')"
  const name = parts.at(-1) ?? ''
  if (parts.length === 2) {
    if (parts[0] === '') return 'has an empty prefix before "/"'
    const prefix = dns1123Subdomain(parts[0])
    if (prefix) return `prefix ${prefix}`
  }

  if (name === '') return 'name part must be non-empty'
  if (name.length > 63) return 'name part must be no more than 63 characters'
  if (!QUALIFIED_NAME.test(name)) {
    return "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
  }

  return undefined
}

export function labelValue(value: string): string | undefined {
  if (value.length > 63) return 'must be no more than 63 characters'
  if (!LABEL_VALUE.test(value)) {
    return "must be empty or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
  }

  return undefined
}

export function envVarName(value: string): string | undefined {
  if (!ENV_VAR_NAME.test(value)) {
    return "must consist of letters, digits, '_', '-' or '.', and must not start with a digit (e.g. 'MY_VAR')"
  }

  return undefined
}

/** Port names (IANA_SVC_NAME): at most 15 lowercase letters, digits and '-', with a letter, no '--', no leading or trailing '-'. */
export function portName(value: string): string | undefined {
  if (value.length > 15) return 'must be no more than 15 characters'
  if (!IANA_SVC_NAME.test(value)) return "must contain only lowercase letters, digits and '-'"
  if (!/[a-z]/.test(value)) return 'must contain at least one letter'
  if (value.includes('--')) return "must not contain consecutive '-'"
  if (value.startsWith('-') || value.endsWith('-')) return "must not begin or end with '-'"
  return undefined
}

export function ipAddress(value: string): string | undefined {
  const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(value)
  if (v4) return v4.slice(1).every((part) => Number(part) <= 255) ? undefined : 'must be a valid IP address'
  if (value.includes(':') && /^[0-9a-fA-F:.]+$/.test(value) && value.split('::').length <= 2) return undefined
  return 'must be a valid IP address (e.g. 10.9.8.7 or 2001:db8::ffff)'
}

/** The closest of `candidates` to a mistyped key, for "did you mean ...?". */
export function closestName(input: string, candidates: readonly string[]): string | undefined {
  const lower = input.toLowerCase()
  let best: string | undefined
  let bestDistance = Infinity
  for (const candidate of candidates) {
    if (candidate.toLowerCase() === lower) return candidate
    const distance = editDistance(lower, candidate.toLowerCase())
    if (distance < bestDistance) {
      best = candidate
      bestDistance = distance
    }
  }

  return bestDistance <= Math.max(1, Math.min(3, Math.floor(input.length / 4))) ? best : undefined
}

/**
 * closestName, else the one field whose camelCase words hold all of the input's in order, or whose
 * words the input holds ("imagePolicy" → imagePullPolicy, "mountPropagationMode" → mountPropagation):
 * a word left out or added is a longer edit than a typo, and as common.
 */
export function closestField(input: string, candidates: readonly string[]): string | undefined {
  const close = closestName(input, candidates)
  if (close) return close
  const words = camelWords(input)
  if (words.length < 2) return undefined
  const matches = candidates.filter((candidate) => {
    const other = camelWords(candidate)
    return other.length >= 2 && (inOrder(words, other) || inOrder(other, words))
  })
  return matches.length === 1 ? matches[0] : undefined
}

function camelWords(name: string): string[] {
  return name
    .split(/(?=[A-Z])|[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((word) => word.toLowerCase())
}

/** Whether every word of `part` appears in `whole`, in order. */
function inOrder(part: readonly string[], whole: readonly string[]): boolean {
  let at = 0
  for (const word of whole) if (word === part[at]) at++
  return at === part.length
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({length: b.length + 1}, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1))
    }

    previous = current
  }

  return previous[b.length]
}
