import {readdirSync, readFileSync} from 'node:fs'
import {dirname, join, relative, resolve} from 'node:path'
import {fileURLToPath} from 'node:url'
import ts from 'typescript'
import {describe, expect, it} from 'vitest'

import {ImageServiceService, RuntimeServiceService} from '../../src/generated/runtime/v1/api.js'

/**
 * The architecture as a test (architecture-review.md, section 4, "Dependency rule" and target layout):
 * `commands → {kubelet, images, node} → kube → {cri, util, errors}`, `manifest` used by `kubelet` and
 * `commands`, `output` using `kube` and `util` but never `kubelet`, `images` or `node`; no import cycles
 * between folders; no file in src/lib over 400 lines, no command over 250; no CRI call in a command.
 */

/**
 * Violations the tree has today, each with the refactor step that removes it. The test passes only while
 * every one of them still occurs, so this list can only shrink: when a refactor fixes one, delete its line.
 * Never add a line to make a new violation pass; fix the code or change the rule (LAYERS) on purpose.
 */
const KNOWN_VIOLATIONS = {
  /** `file -> imported file`, against the LAYERS table. */
  imports: {} as Record<string, string>,
  /** `cycle a, b`: folders that import each other, directly or round a loop. */
  cycles: {} as Record<string, string>,
  /** `file:limit`: files over their line limit. */
  sizes: {} as Record<string, string>,
  /** `file -> CRI method`: RPCs called from a command. */
  criCalls: {} as Record<string, string>,
}

type Layer =
  | 'api'
  | 'base'
  | 'commands'
  | 'completion'
  | 'containerd'
  | 'cri'
  | 'crictl'
  | 'debug'
  | 'entry'
  | 'errors'
  | 'generated'
  | 'host'
  | 'images'
  | 'kube'
  | 'kubelet'
  | 'local-kubelet'
  | 'logs'
  | 'manifest'
  | 'metrics'
  | 'node'
  | 'output'
  | 'streaming'
  | 'prober'
  | 'ui'
  | 'util'

/**
 * Which layers each layer may import (its own files always). One row per folder of src/lib, plus:
 * - `base`: src/lib/base-command.ts and src/lib/flags.ts, the command infrastructure. Only commands use it; it
 *   builds the client and renders, so it sees output, kube, cri and the ground floor, never a wing.
 * - `errors`: src/lib/errors.ts, and `generated`: the ts-proto CRI types, which every layer but manifest and the
 *   leaf helpers may name (a command names them only as the types of its JSON output).
 * Decisions beyond the review's rule:
 * - Inside the middle floor only kubelet -> images (SyncPod calls EnsureImageExists, as kuberuntime does) and
 *   node -> images (the read side lists and inspects images). images uses neither, so the floor has no loop.
 * - Commands reach the runtime through base-command's client() and lib calls, so they do not import cri/.
 * - manifest is input parsing: it names kube's vocabulary (policies, container types) and checks image
 *   references with the image wing's grammar (images/reference.ts); kube and images never import it.
 * - logs (the CRI log file format and follower) and completion (shell scripts from the command list) are leaf
 *   helpers on util and errors; logs serves commands, node and the kubelet, completion only commands.
 * - errors is the ground: util may throw its errors, errors imports nothing.
 * - streaming (exec -i/-t, attach, port-forward) asks the runtime for a streaming URL and speaks SPDY to it: a wing
 *   beside node that only commands use; it names containers and sandboxes (generated) and never parses manifests.
 * - `api`: the library (`import {connect} from 'podctl'`, package.json's exports): connect, run and drive pods from
 *   a test. It sits where commands sit, beside them, and uses the same wings, never base, output, flags or anything
 *   of oclif's; nothing but commands may import it (issue 24), so the CLI's commands can become its users.
 * - `entry`: a file directly under src/ (launch.ts) starts the process before anything is loaded or cached, so it
 *   imports Node's built-ins only.
 */
const LAYERS: Record<Layer, readonly Layer[]> = {
  api: [
    'kubelet',
    'local-kubelet',
    'images',
    'node',
    'host',
    'streaming',
    'manifest',
    'logs',
    'kube',
    'cri',
    'util',
    'errors',
    'generated',
  ],
  commands: [
    'api',
    'base',
    'debug',
    'kubelet',
    'local-kubelet',
    'images',
    'node',
    'host',
    'manifest',
    'metrics',
    'output',
    'logs',
    'completion',
    'streaming',
    'ui',
    'kube',
    'util',
    'errors',
    'generated',
  ],
  // `podctl ui` (issue 38): the live view of a node — one listing a refresh, the kubelet's status of every pod
  // from it, the event stream, and the one-shot commands' pieces behind its keys (logs, status, the workers' kill,
  // exec -it). It sits where commands sit, and only the ui command imports it; its Ink view is loaded lazily.
  ui: ['kubelet', 'local-kubelet', 'node', 'streaming', 'logs', 'output', 'kube', 'cri', 'util', 'errors', 'generated'],
  // The kubelet's prober: probe workers and lifecycle handlers that run from the node (HTTP, TCP, gRPC,
  // ExecSync). It reads the pod model and calls the runtime; the kubelet wing (hooks, waits) and the
  // reconciler use it, so it sits beside kube on the floor below them and never imports a wing.
  prober: ['manifest', 'kube', 'cri', 'util', 'errors', 'generated'],
  // The kubelet that may run on this machine (not the kubelet podctl reproduces): whether one uses the runtime
  // (from /proc, its flags and config file, its sockets), and its static pod directory. Only commands use it.
  'local-kubelet': ['manifest', 'kube', 'util', 'errors'],
  base: ['output', 'kube', 'cri', 'util', 'errors', 'generated'],
  // crictl v1.37's personality (issues 20, 34): its own front end, chosen at start by the entries (personality.ts):
  // crictl's command line (command table, urfave's parsing and help), its Actions (the CRI calls crictl makes, with
  // its words), logrus' lines, and its text, JSON, templates and filters. It sits where commands sit and uses the
  // read side, streams and log reader as they do, never a command, base-command, oclif or the kubelet wing; no
  // command and not base-command imports it (issue 34: podctl's commands know nothing of crictl).
  crictl: ['node', 'images', 'streaming', 'logs', 'output', 'kube', 'cri', 'util', 'errors', 'generated'],
  // `podctl debug` (issue 35): a debug container added to a pod, or a debug pod, through the kubelet wing (create's
  // startContainer, run's pods, the workers' kill), the user's streams on it (streaming, the log follower, node's
  // liveness) until it exits, and the reaper of killed sessions' leftovers. Commands (debug, gc) use it; it sits
  // where they sit and imports no command, base or api.
  debug: ['kubelet', 'images', 'node', 'streaming', 'manifest', 'logs', 'kube', 'cri', 'util', 'errors', 'generated'],
  kubelet: ['images', 'manifest', 'prober', 'logs', 'metrics', 'kube', 'cri', 'util', 'errors', 'generated'],
  images: ['kube', 'containerd', 'cri', 'util', 'errors', 'generated'],
  node: ['images', 'logs', 'kube', 'cri', 'util', 'errors', 'generated'],
  // A running container from the host's side (issue 35): its process, root, namespaces and cgroups through /proc,
  // for what the CRI has no call for (exec as a user, cp, top). It finds the container's process through the read
  // side (node's verbose status), so it sits above node, beside streaming; commands and the library use it.
  host: ['node', 'kube', 'cri', 'util', 'errors', 'generated'],
  output: ['kube', 'util', 'errors', 'generated'],
  manifest: ['images', 'kube', 'util', 'errors'],
  logs: ['util', 'errors'],
  streaming: ['kube', 'cri', 'util', 'errors', 'generated'],
  completion: ['util', 'errors'],
  // podctl's own /metrics: a registry the kubelet wing reports into, its text format and the HTTP server commands start.
  metrics: ['util', 'errors'],
  kube: ['cri', 'util', 'errors', 'generated'],
  cri: ['util', 'errors', 'generated'],
  // containerd's own content service on the CRI socket (pull progress): beside cri, on the same floor; only images reads it.
  containerd: ['util', 'errors', 'generated'],
  util: ['errors'],
  errors: [],
  generated: [],
  entry: [],
}

/**
 * The kubelet wing in the kubelet's own packages (pkg/kubelet), one folder a concern, each importing only the
 * folders below it in this table (its own files always):
 * - `core`: the ground floor — the kubelet's failure reasons, the downward API and env resolution, resources,
 *   security contexts, node settings, termination order, which runtime a pod record belongs to. Imports nothing
 *   else in the wing.
 * - `volumes`: pod directories, volume set-up, ConfigMap/Secret/projected contents, mounts (pkg/kubelet/volumemanager).
 * - `lifecycle`: admission and container lifecycle hooks (pkg/kubelet/lifecycle).
 * - `config`: the pod source — the recorded desired pod, its objects, and the one lock on a pod's record (pkg/kubelet/config).
 * - `kuberuntime`: SyncPod (observe → computePodActions → act), sandboxes, containers, kill, clean-up (pkg/kubelet/kuberuntime).
 * - `records`: the records of pods the runtime no longer has (a reboot, crictl behind podctl's back): which count, and
 *   their removal by `kill`.
 * - `claims`: the PersistentVolumeClaims' local directories: their users, `podctl claims`, `kill --delete-claims`.
 * - `status`: the status manager and GetPodStatus's phase, conditions and readiness (pkg/kubelet/status).
 * - `workers`: the pod workers (pod_workers.go), the one way to act on a pod: SyncPod and a pod's termination go through
 *   workers/pod-workers.ts and nowhere else; `sync` of several pods, `sync -f`'s apply, kill of several pods, and the
 *   supervised worker of one pod.
 * - `run`: `podctl run`'s flow through the workers — plan, record, drive the pod's worker until a condition, roll back, report.
 * - `supervisor`: the kubelet's sync loop in the foreground (`sync --watch`, `run --supervise`): one listing, an event
 *   stream, the watched manifest source's pods, garbage collection beside them.
 */
const WING_LAYERS = {
  core: [],
  volumes: ['core'],
  lifecycle: ['core'],
  config: ['core', 'volumes'],
  kuberuntime: ['core', 'volumes', 'lifecycle', 'config'],
  records: ['core', 'volumes', 'lifecycle', 'config', 'kuberuntime'],
  claims: ['core', 'volumes', 'lifecycle', 'config'],
  status: ['core', 'volumes', 'lifecycle', 'config', 'kuberuntime'],
  gc: ['core', 'volumes', 'lifecycle', 'config', 'kuberuntime'],
  workers: ['core', 'volumes', 'lifecycle', 'config', 'kuberuntime', 'records', 'status'],
  run: ['core', 'volumes', 'lifecycle', 'config', 'kuberuntime', 'records', 'status', 'workers'],
  supervisor: ['core', 'volumes', 'lifecycle', 'config', 'kuberuntime', 'records', 'status', 'gc', 'workers', 'run'],
} as const satisfies Record<string, readonly string[]>
type WingFolder = keyof typeof WING_LAYERS
const WING = 'src/lib/kubelet/'

/** The wing folder of a repository path under src/lib/kubelet/, '' for a file at the wing's root, undefined elsewhere. */
function wingFolderOf(path: string): WingFolder | '' | undefined {
  if (!path.startsWith(WING)) return undefined
  const rest = path.slice(WING.length)
  return rest.includes('/') ? (rest.slice(0, rest.indexOf('/')) as WingFolder) : ''
}

/**
 * The pod workers are the one way to act on a pod (issue 32, the kubelet's pod_workers.go): SyncPod, a new pod's
 * sandbox, a pod's kill and a failed start's rollback are called from workers/pod-workers.ts and from inside the
 * runtime manager (kuberuntime/, whose SyncPod recreates and kills), nowhere else.
 */
const POD_WORKERS = 'src/lib/kubelet/workers/pod-workers.ts'
const POD_ACTIONS: Record<string, readonly string[]> = {
  'src/lib/kubelet/kuberuntime/sync-pod.ts': ['syncPod'],
  'src/lib/kubelet/kuberuntime/create-sandbox.ts': ['createSandboxForPod'],
  'src/lib/kubelet/kuberuntime/kill.ts': ['killPod'],
  'src/lib/kubelet/kuberuntime/rollback.ts': ['rollBackPod', 'removePodRemains'],
}

/** The names a file imports as values (not `import type`), with the repository path they come from. */
function valueImportsOf(file: SourceFile): Array<{module: string; name: string}> {
  const found: Array<{module: string; name: string}> = []
  for (const statement of file.ast.statements) {
    if (!ts.isImportDeclaration(statement) || statement.importClause?.isTypeOnly || !ts.isStringLiteral(statement.moduleSpecifier)) continue
    const module = resolveImport(file.path, statement.moduleSpecifier.text)
    const bindings = statement.importClause?.namedBindings
    if (!module || !bindings || !ts.isNamedImports(bindings)) continue
    for (const element of bindings.elements)
      if (!element.isTypeOnly) found.push({module, name: (element.propertyName ?? element.name).text})
  }

  return found
}

const LIB_LINE_LIMIT = 400
const COMMAND_LINE_LIMIT = 250

function lineLimit(path: string): number | undefined {
  if (path.startsWith('src/commands/')) return COMMAND_LINE_LIMIT
  if (path.startsWith('src/lib/')) return LIB_LINE_LIMIT
  return undefined
}

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const SRC = join(ROOT, 'src')

/** Repository-relative path with forward slashes, as used in messages and KNOWN_VIOLATIONS. */
function repoPath(absolute: string): string {
  return relative(ROOT, absolute).split('\\').join('/')
}

function listSources(dir: string): string[] {
  return readdirSync(dir, {withFileTypes: true}).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return path === join(SRC, 'generated') ? [] : listSources(path)
    return entry.name.endsWith('.ts') ? [path] : []
  })
}

/** The layer of a repository path, or undefined for a file the table does not place. */
function layerOf(path: string): Layer | undefined {
  if (/^src\/[^/]+\.ts$/.test(path)) return 'entry'
  if (path.startsWith('src/commands/')) return 'commands'
  if (path.startsWith('src/generated/')) return 'generated'
  if (path === 'src/lib/base-command.ts' || path === 'src/lib/flags.ts') return 'base'
  if (path === 'src/lib/errors.ts') return 'errors'
  const folder = /^src\/lib\/([^/]+)\//.exec(path)?.[1]
  return folder !== undefined && folder in LAYERS ? (folder as Layer) : undefined
}

interface SourceFile {
  path: string
  text: string
  ast: ts.SourceFile
  /** Every module specifier: static import, import type, export … from, import('…') and type-level import('…'). */
  specifiers: string[]
}

function specifiersOf(ast: ts.SourceFile): string[] {
  const found: string[] = []
  const visit = (node: ts.Node): void => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      found.push(node.moduleSpecifier.text)
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [argument] = node.arguments
      found.push(argument && ts.isStringLiteralLike(argument) ? argument.text : '<computed>')
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      found.push(node.argument.literal.text)
    }

    ts.forEachChild(node, visit)
  }

  visit(ast)
  return found
}

const files: SourceFile[] = listSources(SRC).map((absolute) => {
  const text = readFileSync(absolute, 'utf8')
  const ast = ts.createSourceFile(absolute, text, ts.ScriptTarget.Latest, true)
  return {path: repoPath(absolute), text, ast, specifiers: specifiersOf(ast)}
})

/** The repository path a relative specifier points at (`./x.js` is the source `./x.ts`); undefined for a package. */
function resolveImport(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined
  return repoPath(resolve(ROOT, dirname(from), specifier)).replace(/\.js$/, '.ts')
}

interface Violation {
  key: string
  message: string
}

/** Fails with the violations that are not allow-listed, and with the allow-list entries that no longer occur. */
function expectOnlyKnown(known: Record<string, string>, found: Violation[]): void {
  const foundKeys = new Set(found.map((violation) => violation.key))
  const unexpected = found.filter((violation) => !(violation.key in known)).map((violation) => violation.message)
  const fixed = Object.keys(known)
    .filter((key) => !foundKeys.has(key))
    .map((key) => `${key}: no longer occurs; delete it from KNOWN_VIOLATIONS`)
  expect({newViolations: [...new Set(unexpected)], fixedButStillListed: fixed}).toEqual({newViolations: [], fixedButStillListed: []})
}

/** Cross-layer import edges that actually occur, with one example file pair each. */
function layerEdges(): Map<Layer, Map<Layer, string>> {
  const edges = new Map<Layer, Map<Layer, string>>()
  for (const file of files) {
    const from = layerOf(file.path)
    for (const specifier of file.specifiers) {
      const target = resolveImport(file.path, specifier)
      const to = target === undefined ? undefined : layerOf(target)
      if (from === undefined || to === undefined || from === to) continue
      if (!edges.has(from)) edges.set(from, new Map())
      edges.get(from)!.set(to, `${file.path} -> ${target}`)
    }
  }

  return edges
}

/** Strongly connected components of more than one node (Tarjan), each sorted: folders or files that import each other. */
function cyclesOf<Node extends string>(nodes: Iterable<Node>, next: (node: Node) => Iterable<Node>): Node[][] {
  const index = new Map<Node, number>()
  const low = new Map<Node, number>()
  const stack: Node[] = []
  const onStack = new Set<Node>()
  const components: Node[][] = []
  const connect = (node: Node): void => {
    index.set(node, index.size)
    low.set(node, index.get(node)!)
    stack.push(node)
    onStack.add(node)
    for (const other of next(node)) {
      if (!index.has(other)) {
        connect(other)
        low.set(node, Math.min(low.get(node)!, low.get(other)!))
      } else if (onStack.has(other)) {
        low.set(node, Math.min(low.get(node)!, index.get(other)!))
      }
    }

    if (low.get(node) === index.get(node)) {
      const component: Node[] = []
      let member: Node
      do {
        member = stack.pop()!
        onStack.delete(member)
        component.push(member)
      } while (member !== node)

      if (component.length > 1) components.push(component.sort())
    }
  }

  for (const node of nodes) if (!index.has(node)) connect(node)
  return components
}

function layerCycles(edges: Map<Layer, Map<Layer, string>>): Layer[][] {
  return cyclesOf(Object.keys(LAYERS) as Layer[], (layer) => edges.get(layer)?.keys() ?? [])
}

/** One example import for each edge inside a cycle, to name in the failure. */
function importsWithin(edges: Map<Layer, Map<Layer, string>>, component: Layer[]): string[] {
  const examples: string[] = []
  for (const from of component) {
    for (const [to, example] of edges.get(from) ?? []) if (component.includes(to)) examples.push(example)
  }

  return examples
}

/** CRI method names, from the generated service definitions (the keys are the client's method names). */
const CRI_METHODS = new Set([...Object.keys(RuntimeServiceService), ...Object.keys(ImageServiceService)])
/**
 * Names that cannot be anything but a CRI method (listPodSandbox, removeImage, …) are flagged wherever they appear
 * in a command: as a string or as a called property. One-word names (version, status, exec, attach) are also
 * words and command names, so they are flagged only as the method of a `.runtime('…')` or `.image('…')` call.
 * A bare function of that name (node/'s listContainers()) is a lib call wrapping the RPC, which is the point.
 */
const DISTINCT_CRI_METHODS = new Set([...CRI_METHODS].filter((name) => /[A-Z]/.test(name)))
/** CriClient's entry points, which take the CRI method name as their first argument (main added runtimeOptional). */
const CLIENT_CALLS = new Set(['runtime', 'runtimeOptional', 'image'])

function criCallsIn(file: SourceFile): string[] {
  const methods: string[] = []
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
      const callee = node.expression.name.text
      const [first] = node.arguments
      if (CLIENT_CALLS.has(callee) && first !== undefined) {
        if (!ts.isStringLiteralLike(first)) methods.push(`<computed ${callee} call>`)
        else if (CRI_METHODS.has(first.text)) methods.push(first.text)
      }

      if (DISTINCT_CRI_METHODS.has(callee)) methods.push(callee)
    } else if (ts.isStringLiteralLike(node) && DISTINCT_CRI_METHODS.has(node.text)) {
      methods.push(node.text)
    }

    ts.forEachChild(node, visit)
  }

  visit(file.ast)
  return methods
}

describe('architecture', () => {
  it('reads the sources and the CRI method names', () => {
    expect(files.length).toBeGreaterThan(50)
    expect(files.some((file) => file.path === 'src/lib/base-command.ts' && file.specifiers.length > 0)).toBe(true)
    expect(CRI_METHODS).toContain('listPodSandbox')
    expect(CRI_METHODS).toContain('pullImage')
  })

  it('places every source file in a layer of the table', () => {
    const unplaced = files.filter((file) => layerOf(file.path) === undefined).map((file) => file.path)
    expect(unplaced, 'add the folder to LAYERS, with the layers it may import').toEqual([])
  })

  it('imports follow the dependency rule', () => {
    const found: Violation[] = []
    for (const file of files) {
      const from = layerOf(file.path)
      if (from === undefined) continue
      for (const specifier of file.specifiers) {
        const target = resolveImport(file.path, specifier)
        if (target === undefined) {
          if (specifier === '<computed>') {
            found.push({key: `${file.path} -> <computed>`, message: `${file.path}: import() of a computed path`})
          }

          continue
        }

        const to = layerOf(target)
        if (to === from || (to !== undefined && LAYERS[from].includes(to))) continue
        const rule = `${from} may import only ${LAYERS[from].join(', ') || 'nothing else'}`
        found.push({key: `${file.path} -> ${target}`, message: `${file.path} imports ${target} (${to ?? 'outside src'}): ${rule}`})
      }
    }

    expectOnlyKnown(KNOWN_VIOLATIONS.imports, found)
  })

  it('has no import cycle between folders', () => {
    const edges = layerEdges()
    const found = layerCycles(edges).map((component) => ({
      key: `cycle ${component.join(', ')}`,
      message: `folders ${component.join(', ')} import each other: ${importsWithin(edges, component).join('; ')}`,
    }))
    expectOnlyKnown(KNOWN_VIOLATIONS.cycles, found)
  })

  it(`keeps files in src/lib to ${LIB_LINE_LIMIT} lines and commands to ${COMMAND_LINE_LIMIT}`, () => {
    const found: Violation[] = []
    for (const file of files) {
      const limit = lineLimit(file.path)
      const lines = file.text.split('\n').length - (file.text.endsWith('\n') ? 1 : 0)
      if (limit !== undefined && lines > limit) {
        found.push({key: `${file.path}:${limit}`, message: `${file.path} has ${lines} lines, over the limit of ${limit}`})
      }
    }

    expectOnlyKnown(KNOWN_VIOLATIONS.sizes, found)
  })

  it('calls no CRI method from a command', () => {
    const found = files
      .filter((file) => file.path.startsWith('src/commands/'))
      .flatMap((file) =>
        criCallsIn(file).map((method) => ({
          key: `${file.path} -> CRI ${method}`,
          message: `${file.path} calls the CRI method ${method}: a command makes one lib call (node/, images/, kubelet/), never an RPC`,
        })),
      )
    expectOnlyKnown(KNOWN_VIOLATIONS.criCalls, found)
  })

  it('keeps the kubelet wing in its packages, each importing only the folders below it', () => {
    const found: Violation[] = []
    for (const file of files) {
      const from = wingFolderOf(file.path)
      if (from === undefined) continue
      if (from === '' || !(from in WING_LAYERS)) {
        found.push({key: `${file.path} unplaced`, message: `${file.path} is in no folder of WING_LAYERS: move it to its package`})
        continue
      }

      for (const specifier of file.specifiers) {
        const target = resolveImport(file.path, specifier)
        const to = target === undefined ? undefined : wingFolderOf(target)
        if (to === undefined || to === from || (WING_LAYERS[from] as readonly string[]).includes(to)) continue
        const rule = `kubelet/${from} may import only ${WING_LAYERS[from].join(', ') || 'nothing else'} of the wing`
        found.push({key: `${file.path} -> ${target}`, message: `${file.path} imports ${target}: ${rule}`})
      }
    }

    expect(found.map((violation) => violation.message)).toEqual([])
  })

  it('acts on pods only through the pod workers (workers/pod-workers.ts)', () => {
    const found: string[] = []
    for (const file of files) {
      if (file.path === POD_WORKERS || file.path.startsWith(`${WING}kuberuntime/`)) continue
      for (const {module, name} of valueImportsOf(file)) {
        if (POD_ACTIONS[module]?.includes(name)) found.push(`${file.path} calls ${name} (${module}): ask the pod's worker (${POD_WORKERS})`)
      }
    }

    expect(found).toEqual([])
  })

  it('has no import cycle between files', () => {
    const paths = new Set(files.map((file) => file.path))
    const imports = new Map(
      files.map((file) => [
        file.path,
        file.specifiers
          .map((specifier) => resolveImport(file.path, specifier))
          .filter((target) => target !== undefined && paths.has(target)),
      ]),
    )
    const cycles = cyclesOf(paths, (path) => imports.get(path) as string[])
    expect(cycles.map((cycle) => `files ${cycle.join(', ')} import each other`)).toEqual([])
  })
})
