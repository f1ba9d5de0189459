/**
 * Registry credentials for PullImage, found the way the kubelet's credential keyring finds them
 * (pkg/credentialprovider): docker config files matched against the image's registry, most
 * specific key first. Credentials only ever travel inside the PullImage request: nothing here
 * puts a username, password or auth string into an error message or a log line.
 */
import {readFile} from 'node:fs/promises'
import {homedir} from 'node:os'
import {join} from 'node:path'

import type {AuthConfig} from '../../generated/runtime/v1/api.js'
import {InterruptedError, UsageError} from '../errors.js'
import type {ImageReference} from './reference.js'

export type RegistryAuth = Partial<AuthConfig>

export interface RegistryCredential {
  auth: RegistryAuth
  /** Where it came from, safe to show: "--creds", "/root/.docker/config.json (localhost:5000)". */
  source: string
}

/** Credentials to try, in order, for one image; an empty list means pull anonymously. */
export interface CredentialStore {
  lookup(image: ImageReference): Promise<RegistryCredential[]>
}

/** No credentials at all (tests, or `--no-docker-config`-like callers). */
export const anonymous: CredentialStore = {lookup: async () => []}

/** One credential for every image: `--creds` / `--auth` (crictl's semantics). */
export function explicitCredentials(auth: RegistryAuth, source: string): CredentialStore {
  return {lookup: async () => [{auth, source}]}
}

/**
 * The kubelet's keyring for a pod with imagePullSecrets (MakeDockerKeyring): the pull secrets'
 * credentials first, then the node's own (the docker config files).
 */
export function chainCredentials(first: CredentialStore, then: CredentialStore): CredentialStore {
  return {lookup: async (image) => [...(await first.lookup(image)), ...(await then.lookup(image))]}
}

/** Credentials from kubernetes.io/dockerconfigjson (`{"auths": ...}`) and kubernetes.io/dockercfg Secrets, matched like config files. */
export function pullSecretCredentials(secrets: ReadonlyArray<{label: string; config: string}>): CredentialStore {
  const files = secrets.map(({label, config}) => parseDockerConfig(config, label))
  return {
    async lookup(image) {
      const matches: Array<{credential: RegistryCredential; rank: number; order: number}> = []
      for (const file of files) {
        for (const entry of file.entries) {
          const key = parseRegistryKey(entry.key)
          if (!registryKeyMatches(key, image)) continue
          matches.push({
            credential: {auth: entry.auth, source: `${file.path} (${entry.key})`},
            rank: specificity(key),
            order: matches.length,
          })
        }
      }

      return matches.sort((a, b) => b.rank - a.rank || a.order - b.order).map((match) => match.credential)
    },
  }
}

// ---------------------------------------------------------------------------------------------
// --creds and --auth

/** "host.example.com/app", "localhost:5000/app", "localhost/app": a reference that names its registry. */
export function namesRegistryHost(reference: string): boolean {
  const slash = reference.indexOf('/')
  if (slash <= 0) return false
  const first = reference.slice(0, slash)
  return first.includes('.') || first.includes(':') || first === 'localhost'
}

export interface FlagCredentialOptions {
  /** Asks for the password when --creds has none; only used when stdin is a terminal. */
  prompt?: (question: string) => Promise<string>
  isTTY?: boolean
}

/**
 * `--creds USER[:PASSWORD]` or `--auth BASE64(USER:PASSWORD)` → the AuthConfig to send, or undefined
 * when neither is given. A missing password is asked for on a terminal, refused otherwise.
 */
export async function credentialsFromFlags(
  flags: {creds?: string; auth?: string},
  options: FlagCredentialOptions = {},
): Promise<RegistryCredential | undefined> {
  if (flags.creds !== undefined && flags.auth !== undefined) {
    throw new UsageError('--creds and --auth both give credentials; pass only one')
  }

  if (flags.auth !== undefined) return {auth: {auth: parseAuthFlag(flags.auth)}, source: '--auth'}
  if (flags.creds === undefined) return undefined
  const colon = flags.creds.indexOf(':')
  const username = colon === -1 ? flags.creds : flags.creds.slice(0, colon)
  if (username === '') throw new UsageError('--creds has an empty username; use --creds USER[:PASSWORD]')
  if (colon !== -1) return {auth: {username, password: flags.creds.slice(colon + 1)}, source: '--creds'}

  const isTTY = options.isTTY ?? Boolean(process.stdin.isTTY)
  if (!isTTY) {
    throw new UsageError('--creds has no password and stdin is not a terminal to ask for one; use --creds USER:PASSWORD or --auth')
  }

  const password = await (options.prompt ?? promptHidden)(`Password for ${username}: `)
  return {auth: {username, password}, source: '--creds'}
}

/** Checks that --auth is base64 of "user:password" (the docker config "auth" form); returns it trimmed. */
export function parseAuthFlag(text: string): string {
  const value = text.trim()
  const decoded = decodeAuth(value)
  if (!decoded) throw new UsageError('--auth is not base64 of USER:PASSWORD; create it with: printf %s "USER:PASSWORD" | base64 -w0')
  return value
}

/** base64("user:password") → its parts, or undefined when it is not that. */
export function decodeAuth(value: string): {username: string; password: string} | undefined {
  if (value === '' || !/^[A-Za-z0-9+/_-]+={0,2}$/.test(value)) return undefined
  const text = Buffer.from(value, 'base64').toString('utf8')
  const colon = text.indexOf(':')
  if (colon <= 0) return undefined
  return {username: text.slice(0, colon), password: text.slice(colon + 1)}
}

/** Reads a line from the terminal without echoing it; prompt on stderr. */
export function promptHidden(question: string): Promise<string> {
  const stdin = process.stdin
  process.stderr.write(question)
  return new Promise((resolve, reject) => {
    let value = ''
    const wasRaw = stdin.isRaw
    stdin.setRawMode?.(true)
    stdin.resume()
    const done = (error?: Error) => {
      stdin.off('data', onData)
      stdin.setRawMode?.(wasRaw)
      stdin.pause()
      process.stderr.write('\n')
      if (error) reject(error)
      else resolve(value)
    }

    const onData = (chunk: Buffer) => {
      for (const char of chunk.toString('utf8')) {
        if (char === '\r' || char === '\n') return done()
        if (char === '\u0003') return done(new InterruptedError('password prompt interrupted'))
        if (char === '\u0004') return done()
        if (char === '\u007F' || char === '\b') value = value.slice(0, -1)
        else value += char
      }
    }

    stdin.on('data', onData)
  })
}

// ---------------------------------------------------------------------------------------------
// Docker config files

export interface DockerConfigEntry {
  /** The key as written in the file, e.g. "https://index.docker.io/v1/" or "localhost:5000". */
  key: string
  auth: RegistryAuth
}

export interface DockerConfigFile {
  path: string
  entries: DockerConfigEntry[]
}

/**
 * The files looked at, in order: the user's docker config first ($DOCKER_CONFIG, else
 * ~/.docker), then the kubelet's node-wide /var/lib/kubelet/config.json, then legacy ~/.dockercfg.
 * Every file that exists contributes; matching entries are tried in that order.
 */
export function dockerConfigPaths(env: NodeJS.ProcessEnv = process.env, home = env.HOME || homedir()): string[] {
  const paths = [
    env.DOCKER_CONFIG ? join(env.DOCKER_CONFIG, 'config.json') : undefined,
    join(home, '.docker', 'config.json'),
    '/var/lib/kubelet/config.json',
    join(home, '.dockercfg'),
  ]
  return [...new Set(paths.filter((path): path is string => path !== undefined))]
}

/**
 * Parses config.json (`{"auths": {...}}`) or legacy .dockercfg (the map itself). Entries with an
 * "auth" are decoded into username/password as the kubelet does; entries without credentials
 * (e.g. only a credsStore) are left out. Errors name the file, never its content.
 */
export function parseDockerConfig(text: string, path: string): DockerConfigFile {
  let document: unknown
  try {
    document = JSON.parse(text)
  } catch {
    throw new UsageError(`${path} is not valid JSON; fix it (or set DOCKER_CONFIG to another directory)`)
  }

  if (!isObject(document)) throw new UsageError(`${path} is not a JSON object of registry credentials; fix it or remove it`)
  const auths = isObject(document.auths) ? document.auths : 'auths' in document ? {} : document
  const entries: DockerConfigEntry[] = []
  for (const [key, raw] of Object.entries(auths)) {
    if (!isObject(raw)) continue
    const auth: RegistryAuth = {}
    const decoded = typeof raw.auth === 'string' && raw.auth !== '' ? decodeAuth(raw.auth) : undefined
    if (typeof raw.auth === 'string' && raw.auth !== '' && !decoded) {
      throw new UsageError(`${path}: the "auth" of registry "${key}" is not base64 of USER:PASSWORD; log in again or fix it`)
    }

    if (decoded) Object.assign(auth, decoded)
    else {
      if (typeof raw.username === 'string' && raw.username !== '') auth.username = raw.username
      if (typeof raw.password === 'string' && raw.password !== '') auth.password = raw.password
    }

    if (typeof raw.identitytoken === 'string' && raw.identitytoken !== '') auth.identityToken = raw.identitytoken
    if (typeof raw.registrytoken === 'string' && raw.registrytoken !== '') auth.registryToken = raw.registrytoken
    if (!auth.username && !auth.identityToken && !auth.registryToken) continue
    // No serverAddress, exactly as the kubelet's keyring builds AuthConfig from a docker config: the
    // key ("localhost:5001", "https://index.docker.io/v1/") is only for matching. containerd drops
    // credentials whose serverAddress does not parse as a URL with the host it dials (a bare
    // "host:port" never does, and Docker Hub's key names index.docker.io, not registry-1.docker.io).
    entries.push({key, auth})
  }

  return {path, entries}
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** A config key reduced to what is matched: host (docker.io for Docker Hub's aliases), port, repository path prefix. */
export interface RegistryKey {
  host: string
  port: string
  path: string
}

const DOCKER_HUB_HOSTS = new Set(['docker.io', 'index.docker.io', 'registry-1.docker.io', 'registry.hub.docker.com'])

/**
 * "https://index.docker.io/v1/" → {host: docker.io, port: "", path: ""}; "localhost:5000" →
 * {host: localhost, port: 5000}; "registry.example.com/team" → path "team" (only images below it).
 */
export function parseRegistryKey(key: string): RegistryKey {
  const withoutScheme = key.trim().replace(/^[a-z][a-z0-9+.-]*:\/\//i, '')
  const slash = withoutScheme.indexOf('/')
  const hostPort = (slash === -1 ? withoutScheme : withoutScheme.slice(0, slash)).toLowerCase()
  let path = slash === -1 ? '' : withoutScheme.slice(slash + 1)
  // "/v1/" and "/v2/" are registry API paths docker login writes, not repository prefixes.
  path = path.replace(/^v[12]\/?$/, '').replace(/\/+$/, '')
  const portMatch = /^(.*?)(?::(\d+))?$/.exec(hostPort)
  let host = portMatch?.[1] ?? hostPort
  const port = portMatch?.[2] ?? ''
  if (DOCKER_HUB_HOSTS.has(host)) host = 'docker.io'
  return {host, port, path}
}

/** The kubelet's URLsMatch: same number of host labels, each label glob-matched, same port, path prefix. */
export function registryKeyMatches(key: RegistryKey, image: ImageReference): boolean {
  const target = parseRegistryKey(`${image.domain}/${image.path}`)
  const globLabels = key.host.split('.')
  const targetLabels = target.host.split('.')
  if (globLabels.length !== targetLabels.length) return false
  if (!globLabels.every((glob, index) => globMatch(glob, targetLabels[index]))) return false
  if (key.port !== target.port) return false
  if (key.path === '') return true
  return target.path === key.path || target.path.startsWith(`${key.path}/`)
}

function globMatch(glob: string, text: string): boolean {
  if (!glob.includes('*')) return glob === text
  const pattern = glob
    .split('*')
    .map((part) => part.replaceAll(/[.+?^${}()|[\]\\]/g, String.raw`\$&`))
    .join('[^.]*')
  return new RegExp(`^${pattern}$`).test(text)
}

/** More specific keys first: longer repository path, then no glob, then file order. */
function specificity(key: RegistryKey): number {
  return key.path.length * 4 + (key.host.includes('*') ? 0 : 2) + (key.port ? 1 : 0)
}

/**
 * The docker config keyring: reads the files once, on the first lookup (most commands never pull),
 * and skips files that are absent or unreadable, like the kubelet.
 */
export class DockerConfigKeyring implements CredentialStore {
  private files?: Promise<DockerConfigFile[]>

  constructor(private readonly paths: string[] = dockerConfigPaths()) {}

  async lookup(image: ImageReference): Promise<RegistryCredential[]> {
    const files = await (this.files ??= this.load())
    const matches: Array<{credential: RegistryCredential; rank: number; order: number}> = []
    for (const file of files) {
      for (const entry of file.entries) {
        const key = parseRegistryKey(entry.key)
        if (!registryKeyMatches(key, image)) continue
        matches.push({credential: {auth: entry.auth, source: `${file.path} (${entry.key})`}, rank: specificity(key), order: matches.length})
      }
    }

    matches.sort((a, b) => b.rank - a.rank || a.order - b.order)
    const seen = new Set<string>()
    return matches
      .map((match) => match.credential)
      .filter((credential) => {
        const identity = JSON.stringify([credential.auth.username, credential.auth.password, credential.auth.identityToken])
        if (seen.has(identity)) return false
        seen.add(identity)
        return true
      })
  }

  private async load(): Promise<DockerConfigFile[]> {
    const files: DockerConfigFile[] = []
    for (const path of this.paths) {
      let text: string
      try {
        text = await readFile(path, 'utf8')
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code
        if (code === 'ENOENT' || code === 'EACCES' || code === 'EPERM' || code === 'ENOTDIR' || code === 'EISDIR') continue
        throw new UsageError(`cannot read ${path} (${code}); fix its permissions or set DOCKER_CONFIG`)
      }

      files.push(parseDockerConfig(text, path))
    }

    return files
  }
}
