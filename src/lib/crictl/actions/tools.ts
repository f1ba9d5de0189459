/**
 * crictl config, completion and the jsonschema subcommands (config.go, completion.go, pkg/common/file.go,
 * util.go printJSONSchema).
 * config reads and writes crictl's config file as crictl does: a missing file is created with all
 * seven keys, --set and `config KEY VALUE` write every key back in crictl's order (comments and the
 * order of a flat file kept), --list prints them behind the clear-screen sequence.
 */
import {mkdir, readFile, stat, writeFile} from 'node:fs/promises'
import {dirname} from 'node:path'

import {APP, commandNames, GLOBAL_FLAGS} from '../command-spec.js'
import {CRICTL_COMMANDS} from '../command-table.js'
import {configJsonSchema} from '../json-schema.js'
import {info} from '../log.js'
import {tabwrite} from '../tabwriter.js'
import {CLEAR_SCREEN} from '../stats-text.js'
import {ConfigError, DEFAULT_CONFIG_PATH, emptyConfig, readConfigFile, setConfigValue} from '../server-config.js'
import {CrictlError, type CrictlSession} from '../session.js'

type ConfigValues = Awaited<ReturnType<typeof readConfigFile>>

const KEYS = [
  'runtime-endpoint',
  'image-endpoint',
  'timeout',
  'debug',
  'pull-image-on-create',
  'disable-pull-on-run',
  'max-retries',
] as const
type Key = (typeof KEYS)[number]

function valueText(config: ConfigValues, key: Key): string {
  switch (key) {
    case 'runtime-endpoint':
      return config.runtimeEndpoint
    case 'image-endpoint':
      return config.imageEndpoint
    case 'timeout':
      return String(config.timeoutSeconds)
    case 'debug':
      return String(config.debug)
    case 'pull-image-on-create':
      return String(config.pullImageOnCreate)
    case 'disable-pull-on-run':
      return String(config.disablePullOnRun)
    case 'max-retries':
      return String(config.maxRetries)
  }
}

/** setValue: one key, checked as crictl checks it. */
function setValue(config: ConfigValues, key: string, value: string): void {
  const known = setConfigValue(config, key, value, (name, text, goError) => `parse ${name} value '${text}': ${goError}`)
  if (!known) throw new CrictlError(`no configuration option named ${key}`)
}

/** A string as go-yaml v3 writes a !!str scalar: plain unless it would read back as something else. */
function yamlString(value: string): string {
  const plain =
    value !== '' &&
    !/^[\s!&*%@`'"#|>{}[\],?:-]|:\s|\s#|\s$/.test(value) &&
    !/^(true|false|yes|no|on|off|null|~|[-+]?(\d[\d_]*(\.\d*)?|\.\d+)([eE][-+]?\d+)?|0x[\da-fA-F]+|0o[0-7]+)$/i.test(value)
  return plain ? value : JSON.stringify(value)
}

/**
 * A value as go-yaml v3 re-marshals a scalar node that had STYLE (its old text): double- or
 * single-quoted stays so, a plain one stays plain unless the new text needs quotes.
 */
function styled(oldText: string, key: Key, value: string): string {
  if (oldText.startsWith('"')) return JSON.stringify(value)
  if (oldText.startsWith("'")) return `'${value.replaceAll("'", "''")}'`
  return key === 'runtime-endpoint' || key === 'image-endpoint' ? yamlString(value) : value
}

/** go-yaml v3 keeps no blank line but the one that parts the document's head comment from the first entry. */
function withoutBlankLines(lines: string[]): string[] {
  const blank = (line: string) => line.trim() === ''
  const first = lines.findIndex((line) => !blank(line) && !line.trimStart().startsWith('#'))
  const head = first === -1 ? [] : lines.slice(0, first)
  const partedHead = head.some((line) => !blank(line)) && blank(head.at(-1) ?? 'x')
  const kept = lines.filter((line) => !blank(line))
  if (!partedHead) return kept
  const headLength = head.filter((line) => !blank(line)).length
  return [...kept.slice(0, headLength), '', ...kept.slice(headLength)]
}

/**
 * WriteConfig: crictl edits the parsed YAML nodes and marshals them again, so every entry of a key
 * is set (duplicates too), each value keeps its quoting and its comments, blank lines go (withoutBlankLines), and missing
 * keys are appended in crictl's order.
 */
async function writeConfig(path: string, config: ConfigValues): Promise<void> {
  let lines: string[] = []
  try {
    lines = withoutBlankLines((await readFile(path, 'utf8')).split('\n'))
  } catch {}

  for (const key of KEYS) {
    const value = valueText(config, key)
    const entry = new RegExp(`^${key}\\s*:`)
    if (!lines.some((line) => entry.test(line))) lines.push(`${key}: ${styled('', key, value)}`)
    lines = lines.map((line) =>
      entry.test(line)
        ? line.replace(
            /^([^:]+:\s*)("(?:[^"\\]|\\.)*"|'[^']*'|[^#]*?)(\s+#.*)?$/,
            (_, head: string, old: string, comment = '') => `${head}${styled(old, key, value)}${comment}`,
          )
        : line,
    )
  }

  await mkdir(dirname(path), {recursive: true, mode: 0o755})
  await writeFile(path, `${lines.join('\n')}\n`, {mode: 0o600})
}

async function config(session: CrictlSession): Promise<void> {
  const path = session.invocation.globals.byFlag.get('config')?.at(-1) ?? process.env.CRI_CONFIG_FILE ?? DEFAULT_CONFIG_PATH
  try {
    await stat(path)
  } catch {
    await writeConfig(path, emptyConfig())
  }

  let values: ConfigValues
  try {
    values = await readConfigFile(path)
  } catch (error) {
    throw new CrictlError(`load config file: ${(error as ConfigError).message}`)
  }

  if (session.isSet('get')) {
    const key = session.string('get')
    if (!(KEYS as readonly string[]).includes(key)) throw new CrictlError(`no configuration option named ${key}`)
    return session.println(valueText(values, key as Key))
  }

  if (session.isSet('set')) {
    for (const setting of session.strings('set')) {
      for (const option of setting.split(',')) {
        const pair = option.split('=')
        if (pair.length !== 2) throw new CrictlError(`incorrectly specified option: ${setting}`)
        setValue(values, pair[0], pair[1])
      }
    }

    return writeConfig(path, values)
  }

  if (session.bool('list')) {
    const rows = [['KEY', 'VALUE'], ...KEYS.map((key) => [key, valueText(values, key)])]
    return session.out(CLEAR_SCREEN + tabwrite(rows))
  }

  const [key, value = ''] = session.args
  info(`No --get, --set or --list provided, setting key ${JSON.stringify(key)} to value ${JSON.stringify(value)}`)
  try {
    setValue(values, key, value)
  } catch (error) {
    throw new CrictlError(
      `set ${JSON.stringify(key)} to ${JSON.stringify(value)}: ${(error as Error).message.replace(/^parse \S+ value '[^']*': /, (m) => m)}`,
    )
  }

  await writeConfig(path, values)
}

const bashScript = (words: string) => `_crictl() {
    local cur opts base
    COMPREPLY=()
    cur="\${COMP_WORDS[COMP_CWORD]}"
    opts="${words}"
    COMPREPLY=( $(compgen -W "\${opts}" -- \${cur}) )
    return 0
}

complete -F _crictl crictl
`

const zshScript = (commands: string, options: string) => `#compdef crictl

_crictl() {
  local -a cmds
  cmds=('${commands}')
  _describe 'commands' cmds

  local -a opts
  opts=('${options}')
  _describe 'global options' opts

  return
}

compdef _crictl crictl
`

async function completion(session: CrictlSession): Promise<void> {
  const shell = session.args[0] ?? 'bash'
  const globals = [...GLOBAL_FLAGS.map((flag) => `--${flag.name}`), '--help', '--version']
  if (shell === 'bash')
    return session.out(bashScript([...CRICTL_COMMANDS.flatMap((command) => commandNames(command)), ...globals].join('\n')))
  if (shell === 'zsh') {
    const commands = CRICTL_COMMANDS.flatMap((command) => commandNames(command).map((name) => `${name}:${command.usage}`))
    return session.out(zshScript(commands.join("' '"), globals.join("' '")))
  }

  if (shell === 'fish') throw new CrictlError(`fish completion is not supported by podctl's ${APP.name}; use bash or zsh`)
  throw new CrictlError('only bash, zsh or fish are supported')
}

/**
 * The config schemas (container.go, sandbox.go, image.go): runp's and pull's print the pod's; run's
 * and create's print the pod's with --pod, then the container's with --container, and their usage
 * without either.
 */
async function jsonschema(session: CrictlSession): Promise<void> {
  const parent = session.invocation.parent?.name
  if (parent === 'runp' || parent === 'pull') return session.out(configJsonSchema('PodSandboxConfig'))
  if (!session.isSet('pod') && !session.isSet('container')) session.usage()
  if (session.isSet('pod')) session.out(configJsonSchema('PodSandboxConfig'))
  if (session.isSet('container')) session.out(configJsonSchema('ContainerConfig'))
}

export const ACTIONS = {config, completion, jsonschema}
