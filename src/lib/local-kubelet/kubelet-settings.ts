/**
 * What a running kubelet was told, from its command line and the KubeletConfiguration file its --config
 * names: the runtime endpoint it uses, its root directory, its static pod directory and its node name.
 * Flags win over the file, as in the kubelet; unset values get the kubelet's defaults.
 */
import {readFileSync} from 'node:fs'
import {hostname} from 'node:os'

import {type LocalProcess, seenBy} from './processes.js'

/** The kubelet's default --container-runtime-endpoint (v1.27 and later). */
export const KUBELET_DEFAULT_ENDPOINT = 'unix:///run/containerd/containerd.sock'
/** The kubelet's default --root-dir; its pod-resources socket lives under it. */
export const KUBELET_DEFAULT_ROOT_DIR = '/var/lib/kubelet'

export interface KubeletSettings {
  /** The runtime endpoint it uses, as it names it. */
  endpoint: string
  /** Where that came from: its flag, its --config file, or the kubelet's default. */
  endpointSource: 'flag' | 'config' | 'default'
  /** The --config file, as the kubelet names it. */
  configFile?: string
  rootDir: string
  /** Its static pod directory (--pod-manifest-path, else staticPodPath in --config), as it names it. */
  staticPodPath?: string
  staticPodSource?: 'flag' | 'config'
  /** The node name the kubelet gives static pods (`<name>-<node>`): --hostname-override, else the host name, lowercased. */
  nodeName: string
  /** What could not be read (a --config file that is missing or not YAML), for messages. */
  problems: string[]
}

/** The kubelet's settings from its argv and --config file (read through the process's own root). */
export async function kubeletSettings(process: LocalProcess): Promise<KubeletSettings> {
  const flags = parseFlags(process.argv.slice(1))
  const problems: string[] = []
  const configFile = flags.get('config')
  const config = configFile === undefined ? {} : await readConfig(seenBy(process, configFile), configFile, problems)
  const endpoint = flags.get('container-runtime-endpoint') ?? config.containerRuntimeEndpoint
  const staticPodPath = flags.get('pod-manifest-path') ?? config.staticPodPath
  return {
    endpoint: endpoint ?? defaultEndpoint(flags),
    endpointSource: flags.has('container-runtime-endpoint') ? 'flag' : endpoint === undefined ? 'default' : 'config',
    configFile,
    rootDir: flags.get('root-dir') ?? KUBELET_DEFAULT_ROOT_DIR,
    staticPodPath: staticPodPath || undefined,
    staticPodSource: staticPodPath ? (flags.has('pod-manifest-path') ? 'flag' : 'config') : undefined,
    nodeName: (flags.get('hostname-override') || hostname()).trim().toLowerCase(),
    problems,
  }
}

/** How the kubelet names the endpoint's source, for messages: "--container-runtime-endpoint", "containerRuntimeEndpoint in FILE". */
export function describeEndpointSource(settings: KubeletSettings): string {
  switch (settings.endpointSource) {
    case 'flag': {
      return 'its --container-runtime-endpoint'
    }

    case 'config': {
      return `containerRuntimeEndpoint in its --config ${settings.configFile}`
    }

    default: {
      return "the kubelet's default endpoint"
    }
  }
}

/** pflag's forms: --name=value and --name value (a single dash works too). Later occurrences win, as in pflag. */
export function parseFlags(args: readonly string[]): Map<string, string> {
  const flags = new Map<string, string>()
  for (let index = 0; index < args.length; index++) {
    const match = /^--?([a-z][a-z0-9-]*)(?:=(.*))?$/s.exec(args[index])
    if (!match) continue
    const [, name, inline] = match
    if (inline !== undefined) flags.set(name, inline)
    else if (index + 1 < args.length && !args[index + 1].startsWith('-')) flags.set(name, args[++index])
    else flags.set(name, '')
  }

  return flags
}

/** Before v1.24 a kubelet without --container-runtime=remote used the built-in dockershim. */
function defaultEndpoint(flags: Map<string, string>): string {
  const runtime = flags.get('container-runtime')
  return runtime === 'docker' ? 'unix:///var/run/dockershim.sock' : KUBELET_DEFAULT_ENDPOINT
}

interface KubeletConfigFields {
  containerRuntimeEndpoint?: string
  staticPodPath?: string
}

async function readConfig(path: string, named: string, problems: string[]): Promise<KubeletConfigFields> {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    problems.push(`its --config ${named} cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`)
    return {}
  }

  try {
    // YAML (JSON is YAML too); loaded only here, on the rare path where a kubelet runs.
    const {parse} = await import('yaml')
    const document = parse(text) as unknown
    if (document === null || typeof document !== 'object') return {}
    const {containerRuntimeEndpoint, staticPodPath} = document as Record<string, unknown>
    return {
      containerRuntimeEndpoint:
        typeof containerRuntimeEndpoint === 'string' && containerRuntimeEndpoint ? containerRuntimeEndpoint : undefined,
      staticPodPath: typeof staticPodPath === 'string' ? staticPodPath : undefined,
    }
  } catch (error) {
    problems.push(`its --config ${named} is not valid YAML (${(error as Error).message.split('\n')[0]})`)
    return {}
  }
}
