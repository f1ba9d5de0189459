/**
 * The words crictl v1.29 puts before a failure's own message in its logrus fatal line (each Action's
 * fmt.Errorf("…: %w", err)), which scripts match: `pulling image: …`, `getting status of runtime: …`.
 * Commands that wrap per ID name the ID (`stopping the container "abc": …`); podctl adds those only
 * when one ID was given, so the line names the one that failed.
 */
const FIXED: Readonly<Record<string, string>> = {
  attach: 'attaching running container failed',
  create: 'creating container',
  ps: 'listing containers',
  run: 'running container',
  stats: 'get container stats',
  events: 'getting container events',
  pull: 'pulling image',
  images: 'listing images',
  imagefsinfo: 'image filesystem info request',
  info: 'getting status of runtime',
  metricsp: 'get pod metrics',
  statsp: 'get pod stats',
  'port-forward': 'port forward',
  'runtime-config': 'get runtime config',
  runp: 'run pod sandbox',
  pods: 'listing pod sandboxes',
  version: 'getting the runtime version',
}

const PER_ID: Readonly<Record<string, (id: string) => string>> = {
  start: (id) => `starting the container ${JSON.stringify(id)}`,
  stop: (id) => `stopping the container ${JSON.stringify(id)}`,
  update: (id) => `updating container resources for ${JSON.stringify(id)}`,
  inspect: (id) => `getting the status of the container ${JSON.stringify(id)}`,
  checkpoint: (id) => `checkpointing the container ${JSON.stringify(id)} failed`,
}

/** crictl's prefix for a command's failure, if it has one; exec's depends on whether it runs synchronously. */
export function fatalPrefix(command: string, args: readonly string[], streaming = false): string | undefined {
  if (command === 'exec') return streaming ? 'execing command in container' : 'execing command in container synchronously'
  const perId = PER_ID[command]
  if (perId) return args.length === 1 ? perId(args[0]) : undefined
  return FIXED[command]
}
