/**
 * crictl v1.37's client configuration (main.go app.Before, crictl_config.go, pkg/common/config.go):
 * the config file (--config, CRI_CONFIG_FILE, /etc/crictl.yaml, then crictl.yaml beside the program,
 * with the warning crictl prints when the first is missing), its seven keys with crictl's parse
 * errors, and each setting resolved flag-or-environment first, then the file, then the default.
 */
import {readFile as readFileCallback, stat as statCallback} from 'node:fs'
import {promisify} from 'node:util'
import {dirname, join} from 'node:path'

import {parseFlatYaml} from '../cri/config.js'
import type {FlagValues} from './flag-set.js'
import {parseGoBool, parseGoDuration} from './flag-set.js'
import {warning} from './log.js'

// Not node:fs/promises: loading it is a millisecond of a start (see cri/channels.ts).
const readFile = promisify(readFileCallback)
const stat = promisify(statCallback)

export const DEFAULT_CONFIG_PATH = '/etc/crictl.yaml'
export const DEFAULT_TIMEOUT_MS = 2000
export const DEFAULT_MAX_RETRIES = 3

/** crictl's resolved settings for one invocation (CrictlConfig). */
export interface CrictlSettings {
  runtimeEndpoint: string
  runtimeEndpointIsSet: boolean
  imageEndpoint: string
  imageEndpointIsSet: boolean
  timeoutMs: number
  debug: boolean
  pullImageOnCreate: boolean
  disablePullOnRun: boolean
  maxRetries: number
}

export interface ServerConfiguration {
  runtimeEndpoint: string
  imageEndpoint: string
  timeoutSeconds: number
  debug: boolean
  pullImageOnCreate: boolean
  disablePullOnRun: boolean
  maxRetries: number
}

export class ConfigError extends Error {}

/** How a caller words a value Go cannot parse: the file's reader and `crictl config` say it differently. */
export type ParseFailure = (key: string, value: string, goError: string) => string

const NUMBER_KEYS: Record<string, 'timeoutSeconds' | 'maxRetries'> = {timeout: 'timeoutSeconds', 'max-retries': 'maxRetries'}
const BOOL_KEYS: Record<string, 'debug' | 'pullImageOnCreate' | 'disablePullOnRun'> = {
  debug: 'debug',
  'pull-image-on-create': 'pullImageOnCreate',
  'disable-pull-on-run': 'disablePullOnRun',
}

/** One key of crictl's config (common.getConfigOptions, config.go setValue): strconv's checks, an unknown key undefined. */
export function setConfigValue(config: ServerConfiguration, key: string, value: string, failure: ParseFailure): boolean {
  if (key === 'runtime-endpoint') config.runtimeEndpoint = value
  else if (key === 'image-endpoint') config.imageEndpoint = value
  else if (key in NUMBER_KEYS) {
    if (!/^[+-]?\d+$/.test(value))
      throw new ConfigError(failure(key, value, `strconv.Atoi: parsing ${JSON.stringify(value)}: invalid syntax`))
    config[NUMBER_KEYS[key]] = Number(value)
  } else if (key in BOOL_KEYS) {
    const parsed = parseGoBool(value)
    if (parsed === undefined)
      throw new ConfigError(failure(key, value, `strconv.ParseBool: parsing ${JSON.stringify(value)}: invalid syntax`))
    config[BOOL_KEYS[key]] = parsed
  } else return false
  return true
}

/** A config with no key set. */
export function emptyConfig(): ServerConfiguration {
  return {
    runtimeEndpoint: '',
    imageEndpoint: '',
    timeoutSeconds: 0,
    debug: false,
    pullImageOnCreate: false,
    disablePullOnRun: false,
    maxRetries: 0,
  }
}

/** common.ReadConfig: the file's mapping, each scalar as its text, an unknown key an error. */
export async function readConfigFile(path: string): Promise<ServerConfiguration> {
  const text = await readFile(path, 'utf8')
  let values = parseFlatYaml(text)
  if (!values) {
    const {parse} = await import('yaml')
    values = (parse(text) ?? {}) as Record<string, unknown>
  }

  const config = emptyConfig()
  for (const [name, raw] of Object.entries(values)) {
    const value = raw === null || raw === undefined ? '' : String(raw)
    if (!setConfigValue(config, name, value, (key, _value, goError) => `parsing config option '${key}': ${goError}`)) {
      throw new ConfigError(`Config option '${name}' is not valid`)
    }
  }

  return config
}

function statError(path: string, error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code
  const reason = code === 'ENOENT' ? 'no such file or directory' : code === 'EACCES' ? 'permission denied' : String(code)
  return `stat ${path}: ${reason}`
}

/** common.GetServerConfigFromFile: the file, or crictl.yaml beside the program when it is missing (with crictl's warning). */
async function serverConfigFromFile(path: string, programDir: string): Promise<ServerConfiguration> {
  let file = path
  try {
    await stat(path)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw new ConfigError(`load config file: ${statError(path, error)}`)
    const next = join(programDir, 'crictl.yaml')
    warning(`Config ${JSON.stringify(path)} does not exist, trying next: ${JSON.stringify(next)}`)
    try {
      await stat(next)
    } catch (nextError) {
      throw Object.assign(new ConfigError(`load config file: ${statError(next, nextError)}`), {notExist: true})
    }

    file = next
  }

  try {
    return await readConfigFile(file)
  } catch (error) {
    throw new ConfigError(`load config file: ${(error as Error).message}`)
  }
}

export interface SettingsInputs {
  globals: FlagValues
  env: NodeJS.ProcessEnv
  /** The directory crictl would look in next (os.Executable's). */
  programDir: string
  /** The command's name: `config` may create a missing file named by --config. */
  command: string
}

/** A global flag's value as urfave sees it: the flag, else its first environment variable that is set. */
export function globalValue(inputs: SettingsInputs, name: string, env?: string): string | undefined {
  const given = inputs.globals.byFlag.get(name)?.at(-1)
  if (given !== undefined) return given
  return env === undefined ? undefined : inputs.env[env]
}

/** app.Before and newCrictlConfig: the settings of this invocation. */
export async function resolveSettings(inputs: SettingsInputs): Promise<CrictlSettings> {
  const configFlag = globalValue(inputs, 'config', 'CRI_CONFIG_FILE')
  let file: ServerConfiguration | undefined
  try {
    file = await serverConfigFromFile(configFlag ?? DEFAULT_CONFIG_PATH, inputs.programDir)
  } catch (error) {
    const createdByConfig = inputs.command === 'config' && (error as {notExist?: boolean}).notExist === true
    if (configFlag !== undefined && !createdByConfig) throw new ConfigError(`get server config: ${(error as Error).message}`)
  }

  const runtimeFlag = globalValue(inputs, 'runtime-endpoint', 'CONTAINER_RUNTIME_ENDPOINT')
  const imageFlag = globalValue(inputs, 'image-endpoint', 'IMAGE_SERVICE_ENDPOINT')
  const timeoutFlag = globalValue(inputs, 'timeout')
  const debugFlag = globalValue(inputs, 'debug')
  const retriesFlag = globalValue(inputs, 'max-retries')
  const flagTimeout = timeoutFlag === undefined ? undefined : parseGoDuration(timeoutFlag)
  const timeoutMs =
    flagTimeout !== undefined && flagTimeout > 0
      ? flagTimeout
      : timeoutFlag === undefined && file && file.timeoutSeconds > 0
        ? file.timeoutSeconds * 1000
        : DEFAULT_TIMEOUT_MS
  return {
    runtimeEndpoint: runtimeFlag ?? (file?.runtimeEndpoint || ''),
    runtimeEndpointIsSet: runtimeFlag !== undefined || Boolean(file?.runtimeEndpoint),
    imageEndpoint: imageFlag ?? (file?.imageEndpoint || ''),
    imageEndpointIsSet: imageFlag !== undefined || Boolean(file?.imageEndpoint),
    timeoutMs,
    debug: debugFlag === undefined ? (file?.debug ?? false) : parseGoBool(debugFlag) === true,
    pullImageOnCreate: file?.pullImageOnCreate ?? false,
    disablePullOnRun: file?.disablePullOnRun ?? false,
    maxRetries: retriesFlag === undefined ? (file ? file.maxRetries : DEFAULT_MAX_RETRIES) : Number(retriesFlag),
  }
}

/** The directory crictl.yaml is looked for in next: the program's (bin/ for bin/crictl). */
export function programDirectory(program: string | undefined): string {
  return program ? dirname(program) : process.cwd()
}
