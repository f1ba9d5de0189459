/**
 * `podctl config`: reads and edits crictl's client config file (/etc/crictl.yaml) with crictl's
 * keys and value rules, keeping every other key, the comments and the key order as they are.
 */
import {mkdir, readFile, rename, writeFile} from 'node:fs/promises'
import {dirname} from 'node:path'

import {locateConfig} from '../cri/config.js'
import {UsageError} from '../errors.js'

/** The file `config` reads and edits: --config, else CRI_CONFIG_FILE, else /etc/crictl.yaml (as every command reads it). */
export function configFilePath(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  return locateConfig(flag, env).path
}

export type ConfigKeyKind = 'string' | 'seconds' | 'bool'

/** crictl's keys (pkg/common/config.go), in crictl's order, with what each value must be. */
export const CONFIG_KEYS: ReadonlyArray<{key: string; kind: ConfigKeyKind; default: string}> = [
  {key: 'runtime-endpoint', kind: 'string', default: ''},
  {key: 'image-endpoint', kind: 'string', default: ''},
  {key: 'timeout', kind: 'seconds', default: '0'},
  {key: 'debug', kind: 'bool', default: 'false'},
  {key: 'pull-image-on-create', kind: 'bool', default: 'false'},
  {key: 'disable-pull-on-run', kind: 'bool', default: 'false'},
]

const KEY_LIST = CONFIG_KEYS.map((entry) => entry.key).join(', ')

function keyOf(key: string): (typeof CONFIG_KEYS)[number] {
  const entry = CONFIG_KEYS.find((candidate) => candidate.key === key)
  if (!entry) throw new UsageError(`config option "${key}" is not valid; the keys are ${KEY_LIST}`)
  return entry
}

/** `--set` values: KEY=VALUE, several per flag separated by commas (as crictl splits them). */
export function parseSets(values: readonly string[]): Array<[string, string]> {
  const pairs: Array<[string, string]> = []
  for (const value of values.flatMap((item) => item.split(','))) {
    const eq = value.indexOf('=')
    if (eq <= 0)
      throw new UsageError(`--set "${value}" is not KEY=VALUE, e.g. --set runtime-endpoint=unix:///run/containerd/containerd.sock`)
    pairs.push([value.slice(0, eq).trim(), value.slice(eq + 1).trim()])
  }

  return pairs
}

/** The value as it is written to the file: a string, a whole number of seconds or a boolean. */
export function typedValue(key: string, value: string): boolean | number | string {
  const {kind} = keyOf(key)
  if (kind === 'string') return value
  if (kind === 'bool') {
    if (!/^(true|false)$/i.test(value)) throw new UsageError(`config option "${key}" must be true or false, not "${value}"`)
    return value.toLowerCase() === 'true'
  }

  if (!/^\d+$/.test(value)) throw new UsageError(`config option "timeout" is a whole number of seconds, not "${value}"`)
  return Number(value)
}

type YamlDocument = import('yaml').Document.Parsed

async function parseDocument(text: string, path: string): Promise<YamlDocument> {
  const {isMap, parseDocument: parse} = await import('yaml')
  const document = parse(text)
  if (document.errors.length > 0)
    throw new UsageError(`config file ${path} is not valid YAML: ${document.errors[0].message.split('\n')[0]}`)
  if (document.contents !== null && !isMap(document.contents)) {
    throw new UsageError(`config file ${path} must be a YAML mapping of crictl keys (${KEY_LIST})`)
  }

  return document
}

/** Every crictl key with its value in the file (or crictl's default), as `--list` shows them. */
export async function listConfig(text: string, path: string): Promise<Array<[string, string]>> {
  const document = await parseDocument(text, path)
  return CONFIG_KEYS.map(({key, default: fallback}) => {
    const value = document.get(key)
    return [key, value === undefined || value === null ? fallback : String(value)]
  })
}

/** One key's value (crictl's default when the file does not set it). */
export async function getConfig(text: string, path: string, key: string): Promise<string> {
  keyOf(key)
  const found = (await listConfig(text, path)).find(([name]) => name === key)
  return found ? found[1] : ''
}

/** The file's text with the keys set; other keys, comments and order are kept. */
export async function setConfig(text: string, path: string, pairs: ReadonlyArray<[string, string]>): Promise<string> {
  const typed = pairs.map(([key, value]) => [key, typedValue(key, value)] as const)
  const document = await parseDocument(text, path)
  for (const [key, value] of typed) document.set(key, value)
  return document.toString()
}

/** The file's text, or '' when it does not exist yet (`--set` creates it). */
export async function readConfigText(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT') return ''
    throw new UsageError(`cannot read config file ${path}: ${code === 'EACCES' ? 'permission denied' : String(code ?? error)}`)
  }
}

/** Writes the file as crictl does (mode 0600, parent directory 0755), atomically. */
export async function writeConfigText(path: string, text: string): Promise<void> {
  try {
    await mkdir(dirname(path), {recursive: true, mode: 0o755})
    const temporary = `${path}.${process.pid}.tmp`
    await writeFile(temporary, text, {mode: 0o600})
    await rename(temporary, path)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    throw new UsageError(
      `cannot write config file ${path}: ${code === 'EACCES' ? 'permission denied (run as root?)' : String(code ?? error)}`,
    )
  }
}
