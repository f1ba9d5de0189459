/**
 * crictl v1.37's client configuration (main.go app.Before, crictl_config.go, pkg/common/config.go):
 * the config file (--config, CRI_CONFIG_FILE, /etc/crictl.yaml, then crictl.yaml beside the program,
 * with the warning crictl prints when the first is missing), its seven keys with crictl's parse
 * errors, and each setting resolved flag-or-environment first, then the file, then the default.
 */
import {readFile, stat} from 'node:fs/promises'
import {dirname, join} from 'node:path'

import {parseFlatYaml} from '../cri/config.js'
import type {FlagValues} from './flag-set.js'
import {parseGoBool, parseGoDuration} from './flag-set.js'
import {warning} from './log.js'

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

interface ServerConfiguration {
  runtimeEndpoint: string
  imageEndpoint: string
  timeoutSeconds: number
  debug: boolean
  pullImageOnCreate: boolean
  disablePullOnRun: boolean
  maxRetries: number
}

export class ConfigError extends Error {}

/** strconv.Atoi's error as crictl wraps it. */
function atoi(name: string, value: string): number {
  if (!/^[+-]?\d+$/.test(value))
    throw new ConfigError(`parsing config option '${name}': strconv.Atoi: parsing ${JSON.stringify(value)}: invalid syntax`)
  return Number(value)
}

function parseBool(name: string, value: string): boolean {
  const parsed = parseGoBool(value)
  if (parsed === undefined)
    throw new ConfigError(`parsing config option '${name}': strconv.ParseBool: parsing ${JSON.stringify(value)}: invalid syntax`)
  return parsed
}

/** common.ReadConfig: the file's mapping, each scalar as its text, an unknown key an error. */
export async function readConfigFile(path: string): Promise<ServerConfiguration> {
  const text = await readFile(path, 'utf8')
  let values = parseFlatYaml(text)
  if (!values) {
    const {parse} = await import('yaml')
    values = (parse(text) ?? {}) as Record<string, unknown>
  }

  const config: ServerConfiguration = {
    runtimeEndpoint: '',
    imageEndpoint: '',
    timeoutSeconds: 0,
    debug: false,
    pullImageOnCreate: false,
    disablePullOnRun: false,
    maxRetries: 0,
  }
  for (const [name, raw] of Object.entries(values)) {
    const value = raw === null || raw === undefined ? '' : String(raw)
    switch (name) {
      case 'runtime-endpoint':
        config.runtimeEndpoint = value
        break
      case 'image-endpoint':
        config.imageEndpoint = value
        break
      case 'timeout':
        config.timeoutSeconds = atoi(name, value)
        break
      case 'debug':
        config.debug = parseBool(name, value)
        break
      case 'pull-image-on-create':
        config.pullImageOnCreate = parseBool(name, value)
        break
      case 'disable-pull-on-run':
        config.disablePullOnRun = parseBool(name, value)
        break
      case 'max-retries':
        config.maxRetries = atoi(name, value)
        break
      default:
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
