// Start-up costs of @oclif/core 4 that the bundle avoids (measured: see bench/lab-notes.md,
// "How podctl starts fast"). Each is a small change oclif could take upstream; until then they are applied to
// oclif's source text inside the bundle only, never to node_modules. Every patch names the exact
// text it replaces: if oclif's source changes, the build fails instead of silently shipping an
// unpatched (slow) or half-patched (broken) bundle. sourcePatches, the rolldown transform that
// applies them, also applies grpc-patches.mjs's.
import {readFileSync} from 'node:fs'
import {createRequire} from 'node:module'

const require = createRequire(import.meta.url)
const OCLIF_ENGINES = JSON.parse(readFileSync(require.resolve('@oclif/core/package.json'), 'utf8')).engines.node

function enginesMajor() {
  const match = /^>=\s*(\d+)(?:\.0(?:\.0)?)?$/.exec(OCLIF_ENGINES)
  if (!match) throw new Error(`@oclif/core's engines.node is "${OCLIF_ENGINES}"; the engine-check patch only handles ">=N.0.0"`)
  return Number(match[1])
}

/**
 * Same order as String#localeCompare (ICU root collation) for strings made only of "_", "-", ":",
 * digits and lower-case letters, which is every command id oclif derives from file names; any
 * other string is left to localeCompare. The first localeCompare in a process builds ICU's
 * collator, 7–9 ms, just to sort the ids. test/unit/bundle/oclif-patches.test.ts checks the order.
 */
export const COMPARE_IDS = `function __podctlCompareIds(a, b) {
  const rank = (c) => c === 95 ? 0 : c === 45 ? 1 : c === 58 ? 2 : c >= 48 && c <= 57 ? c - 45 : c >= 97 && c <= 122 ? c - 84 : -1;
  for (let i = 0; i < a.length; i++) if (rank(a.charCodeAt(i)) < 0) return a.localeCompare(b);
  for (let i = 0; i < b.length; i++) if (rank(b.charCodeAt(i)) < 0) return a.localeCompare(b);
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const d = rank(a.charCodeAt(i)) - rank(b.charCodeAt(i));
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}
`

/** What oclif's help template function returns for text t: ejs's rendering, or t itself when t has no ejs delimiter. */
export const RENDER_HELP_TEXT = `t.includes("<%") || t.includes("%>") ? ejs_1.default.render(t, context) : t`

/** file (below @oclif/core/lib/) → [exact text, replacement] pairs. */
export const PATCHES = {
  // The engines warning loads semver (18 ms) to test ">=18.0.0"; a major-version test is the same.
  'index.js': [
    [
      `        const path = require('node:path');
        const semver = require('semver');
        const root = path.join(__dirname, '..');
        const pjson = require(path.join(root, 'package.json'));
        if (!semver.satisfies(process.versions.node, pjson.engines.node)) {`,
      `        const pjson = { engines: { node: ${JSON.stringify(OCLIF_ENGINES)} } };
        if (Number(process.versions.node.split('.')[0]) < ${enginesMajor()}) {`,
    ],
  ],
  // Sorting the command ids is the process's first localeCompare: ICU collator start-up.
  'config/plugin.js': [[`.sort((a, b) => a.id.localeCompare(b.id));`, `.sort((a, b) => __podctlCompareIds(a.id, b.id));\n${COMPARE_IDS}`]],
  // readline is needed only to read a flag value from stdin.
  'parser/parse.js': [
    [
      `const node_readline_1 = require("node:readline");`,
      `const node_readline_1 = { get createInterface() { return require("node:readline").createInterface; } };`,
    ],
  ],
  'util/os.js': [
    // child_process is needed only to ask Windows which shell started the CLI.
    [
      `const node_child_process_1 = require("node:child_process");`,
      `const node_child_process_1 = { get execSync() { return require("node:child_process").execSync; } };`,
    ],
    // Config.load asks wsl-utils whether this is WSL; wsl-utils' own answer is is-wsl's default
    // export, but loading wsl-utils also loads child_process (and its PowerShell helpers) each start.
    [
      `return (await import('wsl-utils')).isWsl ? 'wsl' : (0, node_os_1.platform)();`,
      `return (await import('is-wsl')).default ? 'wsl' : (0, node_os_1.platform)();`,
    ],
  ],
  // The debug package decides at load whether stderr takes colour (supports-color, tty), on every
  // start; its loggers only ever print when DEBUG names them. Without DEBUG, oclif gets silent ones.
  'logger.js': [
    [
      `const debug_1 = __importDefault(require("debug"));`,
      `const debug_1 = { default: (namespace) => process.env.DEBUG ? require("debug")(namespace) : __podctlSilentDebug(namespace) };
function __podctlSilentDebug(namespace) {
    const logger = () => {};
    logger.enabled = false;
    logger.namespace = namespace;
    logger.log = () => {};
    logger.extend = (child, delimiter = ':') => __podctlSilentDebug(namespace + delimiter + child);
    return logger;
}`,
    ],
  ],
  // main.run reads two small helpers from the help system on every start; taken from help/util,
  // where they are defined, the help system itself (lazy above) loads only to show help.
  'main.js': [
    [`(0, help_1.getHelpFlagAdditions)(config)`, `(0, require("./help/util").getHelpFlagAdditions)(config)`],
    [`(0, help_1.normalizeArgv)(config, argv)`, `(0, require("./help/util").normalizeArgv)(config, argv)`],
  ],
  // The help class package.json names (oclif.helpClass) is loaded by path from disk; the bundle and the single
  // executable have it inside them (the podctl:help module, build.mjs).
  'help/index.js': [
    [
      `async function loadHelpClass(config) {
    if (config.pjson.oclif?.helpClass) {`,
      `async function loadHelpClass(config) {
    if (config.pjson.oclif?.helpClass) return require("podctl:help").default;
    if (config.pjson.oclif?.helpClass) {`,
    ],
  ],
  // Help passes every summary, description and flag text through ejs, which compiles a template function for each
  // (ejs caches nothing by default): about a tenth of a `--help` start. Every ejs delimiter holds "<%" or "%>" (a
  // closing one alone is dropped), so text with neither is rendered as it is; only such text skips ejs, and ejs
  // still loads (lazily, below) for text with a tag. test/unit/bundle/oclif-patches.test.ts holds the equivalence.
  'help/util.js': [[`        return ejs_1.default.render(t, context);`, `        return ${RENDER_HELP_TEXT};`]],
  // Config.load reads the user's theme.json on every start; node:fs's own readFile reads it as
  // fs/promises' does (same contents, same errors) without loading fs/promises (lazy below).
  'util/fs.js': [
    [
      `const contents = await (0, promises_1.readFile)(path, 'utf8');`,
      `const contents = await new Promise((resolve, reject) =>
        (0, node_fs_1.readFile)(path, 'utf8', (error, text) => (error ? reject(error) : resolve(text))));`,
    ],
  ],
  // perf_hooks is needed only when oclif's performance tracing is on (OCLIF_PERFORMANCE / DEBUG).
  'performance.js': [
    [
      `const node_perf_hooks_1 = require("node:perf_hooks");`,
      `const node_perf_hooks_1 = {
    get performance() { return require("node:perf_hooks").performance; },
    get PerformanceObserver() { return require("node:perf_hooks").PerformanceObserver; },
};`,
    ],
  ],
}

/**
 * file (below @oclif/core/lib/) → modules it `require`s at load but uses only on some paths (help,
 * error display, plugin discovery, the TTY spinner): each is loaded when a property of it is first
 * read. A listing command never reads them, so it neither evaluates nor caches oclif's help system
 * (formatter, docopts, wrap-ansi, string-width, ejs, …), tinyglobby, minimatch or cli-spinners.
 * Each entry must match one `const|var X = [__importDefault(]require("…")[)];` line exactly.
 */
export const LAZY_REQUIRES = {
  'index.js': ['./help'],
  'flags.js': ['./help'],
  'main.js': ['./help'],
  'errors/handle.js': ['clean-stack', '../help/index'],
  'errors/errors/cli.js': ['clean-stack', 'indent-string', 'wrap-ansi'],
  'errors/errors/pretty-print.js': ['indent-string', 'wrap-ansi'],
  'help/util.js': ['ejs'],
  'config/config.js': ['ejs'],
  'config/plugin.js': ['tinyglobby'],
  'config/plugin-loader.js': ['minimatch'],
  'util/read-pjson.js': ['lilconfig'],
  'module-loader.js': ['get-package-type'],
  // fs/promises (about 20 of Node's internal modules) only for the helpers that read plugins' files
  // and find their TypeScript sources.
  'util/fs.js': ['node:fs/promises'],
  'config/ts-path.js': ['node:fs/promises'],
  'util/read-tsconfig.js': ['node:fs/promises'],
  'ux/index.js': ['./action/spinner'],
}

/** Stands in for a module until one of its properties is read. */
export const LAZY_MODULE = `function __podctlLazyModule(load) {
  let loaded;
  const module = () => (loaded ??= load());
  return new Proxy({}, {
    get: (_, key) => module()[key],
    has: (_, key) => key in module(),
    ownKeys: () => Reflect.ownKeys(module()),
    getOwnPropertyDescriptor: (_, key) => {
      const descriptor = Reflect.getOwnPropertyDescriptor(module(), key);
      return descriptor && {...descriptor, configurable: true};
    },
  });
}
`

/**
 * Makes the `require` of specifier in code lazy; fails unless exactly one line loads it. file names
 * the module in the error (`@oclif/core/lib/…`, `@grpc/grpc-js/build/src/…`).
 */
export function lazyRequire(code, specifier, file) {
  // Groups: 1 const|var, 2 the name, 3 the load expression, 4 the quote.
  const quoted = String.raw`(["'])${specifier.replaceAll(/[.*+?^${}()|[\]\\]/g, String.raw`\$&`)}\4`
  const line = new RegExp(`^(const|var) (\\w+) = ((?:__importDefault\\()?require\\(${quoted}\\)\\)?);$`, 'gm')
  const count = code.match(line)?.length ?? 0
  if (count !== 1)
    throw new Error(
      `${file} changed: expected one line requiring "${specifier}", found ${count}. ` +
        'Update the lazy requires in scripts/bundle/ for this version.',
    )
  return code.replace(line, (_, keyword, name, load) => `${keyword} ${name} = __podctlLazyModule(() => ${load});`)
}

/**
 * A rolldown transform applying one package's patches: in each listed file (its path below
 * `packageDir`), the lazy requires first, then the exact-text replacements; buildEnd fails if a
 * listed file was never bundled.
 */
export function sourcePatches({name, packageDir, patches = {}, lazyRequires = {}}) {
  const escaped = packageDir.split('/').map((part) => part.replaceAll(/[.*+?^${}()|[\]\\]/g, String.raw`\$&`))
  // A path separator of either platform.
  const sep = String.raw`[\\/]`
  const below = new RegExp(`${sep}node_modules${sep}${escaped.join(sep)}${sep}(.+)$`)
  const applied = new Set()
  return {
    name,
    transform: {
      filter: {id: new RegExp(`${sep}${escaped.join(sep)}${sep}`)},
      handler(code, id) {
        const file = below.exec(id)?.[1].replaceAll('\\', '/')
        if (!file || !(file in patches || file in lazyRequires)) return null
        let out = code
        for (const specifier of lazyRequires[file] ?? []) out = lazyRequire(out, specifier, `${packageDir}/${file}`)
        if (file in lazyRequires) out += `\n${LAZY_MODULE}`
        for (const [find, replace] of patches[file] ?? []) {
          const count = out.split(find).length - 1
          if (count !== 1) {
            throw new Error(
              `${packageDir}/${file} changed: expected the text below exactly once, found it ${count} times. ` +
                `Update the patches in scripts/bundle/ for this version.\n${find}`,
            )
          }

          out = out.replace(find, () => replace)
        }

        applied.add(file)
        return {code: out, map: null}
      },
    },
    buildEnd(error) {
      if (error) return
      const missing = [...new Set([...Object.keys(patches), ...Object.keys(lazyRequires)])].filter((file) => !applied.has(file))
      if (missing.length > 0)
        throw new Error(`${packageDir} changed: ${missing.join(', ')} no longer bundled; update the patches in scripts/bundle/`)
    },
  }
}

const OCLIF_LIB = /[\\/]node_modules[\\/]@oclif[\\/]core[\\/]lib[\\/](.+)$/

/** A rolldown plugin applying PATCHES and LAZY_REQUIRES to @oclif/core. */
export function oclifPatches() {
  return {
    ...sourcePatches({name: 'podctl-oclif-patches', packageDir: '@oclif/core/lib', patches: PATCHES, lazyRequires: LAZY_REQUIRES}),
    // The is-wsl that the os.js patch imports is the one wsl-utils depends on.
    async resolveId(source, importer) {
      if (source !== 'is-wsl' || !importer || OCLIF_LIB.exec(importer)?.[1].replaceAll('\\', '/') !== 'util/os.js') return null
      const wslUtils = await this.resolve('wsl-utils', importer, {skipSelf: true})
      const resolved = wslUtils && (await this.resolve('is-wsl', wslUtils.id, {skipSelf: true}))
      if (!resolved) throw new Error('cannot resolve is-wsl through wsl-utils; update scripts/bundle/oclif-patches.mjs')
      return resolved
    },
  }
}
