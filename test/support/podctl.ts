import {spawn} from 'node:child_process'
import {fileURLToPath} from 'node:url'

export const ROOT = fileURLToPath(new URL('../..', import.meta.url))
export const BIN = `${ROOT}bin/run.js`

export interface RunResult {
  code: number | null
  stdout: string
  stderr: string
  ms: number
}

export interface RunOptions {
  env?: Record<string, string | undefined>
  input?: string
  timeoutMs?: number
  /** Called with the child right after spawn (e.g. to send a signal later). */
  onSpawn?: (child: ReturnType<typeof spawn>) => void
  /** Another entry than bin/run.js: a .js file run with node (bin/dev.js), or an executable (the single binary). */
  entry?: string
}

/** Runs the built podctl binary the way a user does: a fresh process, real exit code, real streams. */
export function podctl(args: string[], options: RunOptions = {}): Promise<RunResult> {
  const started = Date.now()
  const env: Record<string, string | undefined> = {...process.env, NO_COLOR: '1', ...options.env}
  for (const key of Object.keys(env)) if (env[key] === undefined) delete env[key]
  return new Promise((resolve, reject) => {
    const entry = options.entry ?? BIN
    const [command, argv] = entry.endsWith('.js') ? [process.execPath, [entry, ...args]] : [entry, args]
    const child = spawn(command, argv, {env: env as NodeJS.ProcessEnv, stdio: ['pipe', 'pipe', 'pipe']})
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => (stdout += chunk))
    child.stderr.on('data', (chunk) => (stderr += chunk))
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 110_000)
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({code, stdout, stderr, ms: Date.now() - started})
    })
    options.onSpawn?.(child)
    child.stdin.end(options.input ?? '')
  })
}

/**
 * Environment that points podctl at `endpoint` (none: at nothing, so each test names its own) and
 * at nothing else: no image endpoint or crictl config from the machine running the tests.
 */
export function endpointEnv(endpoint?: string, extra: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return {CONTAINER_RUNTIME_ENDPOINT: endpoint, IMAGE_SERVICE_ENDPOINT: undefined, CRI_CONFIG_FILE: undefined, ...extra}
}
