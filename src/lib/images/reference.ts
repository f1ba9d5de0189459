/**
 * Image references parsed as the kubelet parses them: docker/distribution's reference grammar
 * through ParseNormalizedNamed (pkg/util/parsers ParseImageName), with the same error texts, so an
 * invalid name fails here — before any RPC — with the message `kubectl describe` would show.
 */

import type {PullPolicy} from '../kube/labels.js'
import {goQuote} from '../util/go-quote.js'
import {InvalidImageNameError} from './errors.js'

const ALPHANUMERIC = '[a-z0-9]+'
const SEPARATOR = '(?:[._]|__|[-]+)'
const PATH_COMPONENT = `${ALPHANUMERIC}(?:${SEPARATOR}${ALPHANUMERIC})*`
const DOMAIN_COMPONENT = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])'
const DOMAIN_NAME = `${DOMAIN_COMPONENT}(?:\\.${DOMAIN_COMPONENT})*`
const IPV6_ADDRESS = String.raw`\[(?:[a-fA-F0-9:]+)\]`
const DOMAIN_AND_PORT = `(?:${DOMAIN_NAME}|${IPV6_ADDRESS})(?::[0-9]+)?`
const TAG = String.raw`[\w][\w.-]{0,127}`
const DIGEST = '[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}'
const REMOTE_NAME = `${PATH_COMPONENT}(?:/${PATH_COMPONENT})*`
const NAME = `(?:${DOMAIN_AND_PORT}/)?${REMOTE_NAME}`

const REFERENCE = new RegExp(`^(${NAME})(?::(${TAG}))?(?:@(${DIGEST}))?$`)
const ANCHORED_NAME = new RegExp(`^(?:(${DOMAIN_AND_PORT})/)?(${REMOTE_NAME})$`)
const IDENTIFIER = /^[a-f0-9]{64}$/
const NAME_TOTAL_LENGTH_MAX = 255

/** Hex lengths of the digest algorithms go-digest registers. */
const DIGEST_HEX_LENGTH: Record<string, number> = {sha256: 64, sha384: 96, sha512: 128}

export const DEFAULT_DOMAIN = 'docker.io'
const LEGACY_DEFAULT_DOMAIN = 'index.docker.io'
const OFFICIAL_REPO_PREFIX = 'library/'

export interface ImageReference {
  /** Fully qualified repository, e.g. "docker.io/library/busybox" or "localhost:5000/podctl/busybox". */
  name: string
  /** Registry host[:port], e.g. "docker.io" or "localhost:5000". */
  domain: string
  /** Repository path inside the registry, e.g. "library/busybox". */
  path: string
  tag?: string
  digest?: string
}

/** Thrown with the distribution library's wording; callers wrap it in the kubelet's message. */
export class ImageReferenceSyntaxError extends Error {}

/**
 * ParseNormalizedNamed: short names get the docker.io domain (and library/ for one-component
 * names) for *parsing* only; callers keep sending the name as written.
 */
export function parseNormalizedReference(text: string): ImageReference {
  if (IDENTIFIER.test(text)) {
    throw new ImageReferenceSyntaxError(`invalid repository name (${text}), cannot specify 64-byte hexadecimal strings`)
  }

  const [domain, remainder] = splitDockerDomain(text)
  const tagSep = remainder.indexOf(':')
  const remoteName = tagSep === -1 ? remainder : remainder.slice(0, tagSep)
  if (remoteName.toLowerCase() !== remoteName) {
    throw new ImageReferenceSyntaxError(`invalid reference format: repository name (${remoteName}) must be lowercase`)
  }

  return parseReference(`${domain}/${remainder}`)
}

/** distribution/reference Parse: the grammar, name length, then the digest. */
export function parseReference(text: string): ImageReference {
  const match = REFERENCE.exec(text)
  if (!match) {
    if (text === '') throw new ImageReferenceSyntaxError('repository name must have at least one component')
    if (REFERENCE.test(text.toLowerCase())) throw new ImageReferenceSyntaxError('repository name must be lowercase')
    throw new ImageReferenceSyntaxError('invalid reference format')
  }

  const [, name, tag, digest] = match
  if (name.length > NAME_TOTAL_LENGTH_MAX) {
    throw new ImageReferenceSyntaxError(`repository name must not be more than ${NAME_TOTAL_LENGTH_MAX} characters`)
  }

  const parts = ANCHORED_NAME.exec(name)
  if (digest !== undefined) validateDigest(digest)
  return {name, domain: parts?.[1] ?? '', path: parts?.[2] ?? name, tag, digest}
}

function splitDockerDomain(name: string): [string, string] {
  const slash = name.indexOf('/')
  let domain: string
  let remainder: string
  const first = slash === -1 ? '' : name.slice(0, slash)
  if (slash === -1 || (!/[.:]/.test(first) && first !== 'localhost' && first.toLowerCase() === first)) {
    domain = DEFAULT_DOMAIN
    remainder = name
  } else {
    domain = first
    remainder = name.slice(slash + 1)
  }

  if (domain === LEGACY_DEFAULT_DOMAIN) domain = DEFAULT_DOMAIN
  if (domain === DEFAULT_DOMAIN && !remainder.includes('/')) remainder = OFFICIAL_REPO_PREFIX + remainder
  return [domain, remainder]
}

/** go-digest Parse/Validate: a registered algorithm and the right number of lowercase hex digits. */
function validateDigest(digest: string): void {
  const colon = digest.indexOf(':')
  if (colon <= 0 || colon + 1 === digest.length) throw new ImageReferenceSyntaxError('invalid checksum digest format')
  const algorithm = digest.slice(0, colon)
  const hex = digest.slice(colon + 1)
  const length = DIGEST_HEX_LENGTH[algorithm]
  if (length === undefined) throw new ImageReferenceSyntaxError('unsupported digest algorithm')
  if (hex.length !== length) throw new ImageReferenceSyntaxError('invalid checksum digest length')
  if (!/^[a-f0-9]+$/.test(hex)) throw new ImageReferenceSyntaxError('invalid checksum digest format')
}

/** parsers.ParseImageName: the parsed reference plus the tag the kubelet assumes ("latest" when neither tag nor digest). */
export function parseImageName(image: string): ImageReference & {defaultedTag: string} {
  let reference: ImageReference
  try {
    reference = parseNormalizedReference(image)
  } catch (error) {
    if (error instanceof ImageReferenceSyntaxError) {
      throw new InvalidImageNameError(`couldn't parse image name ${goQuote(image)}: ${error.message}`, image)
    }

    throw error
  }

  const defaultedTag = reference.tag ?? (reference.digest === undefined ? 'latest' : '')
  return {...reference, defaultedTag}
}

/** Append ":latest" only when the reference has neither tag nor digest; no docker.io rewriting. Throws InvalidImageNameError. */
export function applyDefaultImageTag(image: string): string {
  let parsed: ReturnType<typeof parseImageName>
  try {
    parsed = parseImageName(image)
  } catch (error) {
    if (error instanceof InvalidImageNameError) {
      throw new InvalidImageNameError(`Failed to apply default image tag ${goQuote(image)}: ${error.message}`, image)
    }

    throw error
  }

  const {digest, defaultedTag} = parsed
  // Concatenated rather than rebuilt from the parsed name, which would qualify "busybox" as docker.io/library/busybox.
  if (digest === undefined && defaultedTag !== '' && !image.endsWith(`:${defaultedTag}`)) return `${image}:${defaultedTag}`
  return image
}

/** As the API server defaults it: no tag or ":latest" → Always, else IfNotPresent (digest → IfNotPresent). */
export function defaultPullPolicy(image: string): PullPolicy {
  try {
    return parseImageName(image).defaultedTag === 'latest' ? 'Always' : 'IfNotPresent'
  } catch {
    return 'IfNotPresent'
  }
}
