import {readFile as readFileCallback} from 'node:fs'
import {promisify} from 'node:util'

import {UsageError} from '../errors.js'
import {clampTimerMs, parseDuration} from '../util/duration.js'

// Not node:fs/promises: loading it is a millisecond of a start (see cri/channels.ts).
const readFile = promisify(readFileCallback)

/** crictl's client config (`/etc/crictl.yaml`): the keys podctl honours. */
export interface CrictlConfig {
  path: string
  runtimeEndpoint?: string
  imageEndpoint?: string
  timeoutMs?: number
  debug?: boolean
  pullImageOnCreate?: boolean
  disablePullOnRun?: boolean
}

export const DEFAULT_CONFIG_PATH = '/etc/crictl.yaml'

export interface ConfigLocation {
  path: string
  /** Named by the user (--config or CRI_CONFIG_FILE): a missing file is then an error. */
  explicit: boolean
}

export function locateConfig(flag: string | undefined, env: NodeJS.ProcessEnv): ConfigLocation {
  if (flag) return {path: flag, explicit: true}
  if (env.CRI_CONFIG_FILE) return {path: env.CRI_CONFIG_FILE, explicit: true}
  return {path: DEFAULT_CONFIG_PATH, explicit: false}
}

export async function loadConfig(location: ConfigLocation): Promise<CrictlConfig | undefined> {
  let text: string
  try {
    text = await readFile(location.path, 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT' && !location.explicit) return undefined
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : String(code ?? error)
    throw new UsageError(`cannot read config file ${location.path}: ${why}; fix the path given by --config or CRI_CONFIG_FILE`)
  }

  return parseConfig(text, location.path)
}

/**
 * Parses crictl.yaml. The file is flat `key: value` YAML; a small reader keeps the yaml library
 * (and its load time) off the start-up path of every command, and anything it does not
 * understand falls through to the full parser.
 */
export async function parseConfig(text: string, path: string): Promise<CrictlConfig> {
  let values = parseFlatYaml(text)
  if (!values) {
    const {parse} = await import('yaml')
    let doc: unknown
    try {
      doc = parse(text)
    } catch (error) {
      throw new UsageError(`config file ${path} is not valid YAML: ${firstLine(error)}`)
    }

    if (doc !== null && doc !== undefined && (typeof doc !== 'object' || Array.isArray(doc))) {
      throw new UsageError(`config file ${path} must be a YAML mapping of crictl keys (runtime-endpoint, image-endpoint, timeout, debug)`)
    }

    values = (doc ?? {}) as Record<string, unknown>
  }

  const config: CrictlConfig = {path}
  for (const [key, value] of Object.entries(values)) {
    switch (key) {
      case 'runtime-endpoint':
        config.runtimeEndpoint = optionalString(value, key, path)
        break
      case 'image-endpoint':
        config.imageEndpoint = optionalString(value, key, path)
        break
      case 'timeout':
        config.timeoutMs = configTimeout(value, path)
        break
      case 'debug':
        config.debug = configBool(value, key, path)
        break
      case 'pull-image-on-create':
        config.pullImageOnCreate = configBool(value, key, path)
        break
      case 'disable-pull-on-run':
        config.disablePullOnRun = configBool(value, key, path)
        break
      default:
        // crictl ignores keys it does not know (newer versions add some); so does podctl.
        break
    }
  }

  return config
}

/** Returns undefined when the text is not plain `key: scalar` lines. */
export function parseFlatYaml(text: string): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {}
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/(^|\s)#.*$/, '').trimEnd()
    if (line.trim() === '' || line.trim() === '---') continue
    const match = /^([A-Za-z0-9_-]+):(?:\s+(.*))?$/.exec(line)
    if (!match) return undefined
    const value = (match[2] ?? '').trim()
    if (/^[[{|>&*!]/.test(value)) return undefined
    out[match[1]] = scalar(value)
  }

  return out
}

function scalar(value: string): unknown {
  if (value === '' || value === '~' || value === 'null') return undefined
  if (/^"(.*)"$/.test(value)) return value.slice(1, -1).replaceAll(String.raw`\"`, '"')
  if (/^'(.*)'$/.test(value)) return value.slice(1, -1).replaceAll("''", "'")
  if (/^(true|false)$/i.test(value)) return value.toLowerCase() === 'true'
  if (/^-?\d+(\.\d+)?$/.test(value)) return Number(value)
  return value
}

function optionalString(value: unknown, key: string, path: string): string | undefined {
  if (value === undefined || value === null || value === '') return undefined
  if (typeof value !== 'string')
    throw new UsageError(`config file ${path}: "${key}" must be a string like unix:///run/containerd/containerd.sock`)
  return value
}

function configBool(value: unknown, key: string, path: string): boolean | undefined {
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'boolean') throw new UsageError(`config file ${path}: "${key}" must be true or false`)
  return value
}

/** crictl stores whole seconds; a duration string ("30s") is accepted too. 0 means "default". */
function configTimeout(value: unknown, path: string): number | undefined {
  if (value === undefined || value === null) return undefined
  if (typeof value === 'number' && value >= 0) return value === 0 ? undefined : clampTimerMs(value * 1000)
  if (typeof value === 'string') {
    const ms = parseDuration(value)
    if (ms !== undefined) return ms === 0 ? undefined : clampTimerMs(ms)
  }

  throw new UsageError(`config file ${path}: "timeout" must be a number of seconds or a duration like 10s`)
}

function firstLine(error: unknown): string {
  return String((error as Error)?.message ?? error).split('\n')[0]
}
