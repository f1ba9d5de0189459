// What the quick bundle (dist/bundle/podctl.quick.cjs; why it exists: src/launch.ts) keeps and
// what it leaves out. It is built from the same entry as the full bundle, with two differences:
// the command map's getters for the commands it leaves out throw leftOut instead of requiring
// the command, and crictl's action modules (src/lib/crictl/actions.ts) it leaves out become
// modules that throw leftOut when loaded. Both throw before the command does anything, and the
// entry's execute answers LEFT_OUT, so the launcher runs the full bundle instead.
import {join} from 'node:path'
import {pathToFileURL} from 'node:url'

/**
 * The commands the quick bundle keeps: podctl's commands named like QUICK_GROUPS (a command's
 * group is its name, src/launch.ts cacheGroup) and the crictl action modules those names run.
 * Read from the compiled dist/ (the build runs after tsc), so nothing here repeats those lists.
 */
export async function quickContents(root) {
  const {QUICK_GROUPS, LEFT_OUT_KEY} = await import(pathToFileURL(join(root, 'dist', 'launch.js')).href)
  const {ACTION_GROUP_OF} = await import(pathToFileURL(join(root, 'dist', 'lib', 'crictl', 'actions.js')).href)
  const crictlActions = new Set([...QUICK_GROUPS].map((name) => ACTION_GROUP_OF[name]).filter(Boolean))
  return {commands: new Set(QUICK_GROUPS), crictlActions, leftOutKey: LEFT_OUT_KEY}
}

/** The virtual module podctl:left-out: the error that says "not in this bundle", and its test. */
export function leftOutModule(leftOutKey) {
  const mark = `Symbol.for(${JSON.stringify(leftOutKey)})`
  return [
    `export const LEFT_OUT = ${mark};`,
    'export function leftOut(what) {',
    `  throw Object.assign(new Error(what + ' is not in this bundle'), {[${mark}]: true});`,
    '}',
    `export function isLeftOut(error) { return Boolean(error && error[${mark}]); }`,
  ].join('\n')
}

/** A rolldown plugin: crictl's action modules outside `kept` become modules that throw leftOut. */
export function leaveOutCrictlActions(root, kept) {
  const actions = join(root, 'dist', 'lib', 'crictl', 'actions.js')
  const PREFIX = '\0left-out-crictl:'
  let seen = false
  return {
    name: 'podctl-quick-crictl-actions',
    resolveId(source, importer) {
      const group = /^\.\/actions\/([a-z-]+)\.js$/.exec(source)?.[1]
      if (importer !== actions || group === undefined) return null
      seen = true
      return kept.has(group) ? null : `${PREFIX}${group}`
    },
    load(id) {
      if (!id.startsWith(PREFIX)) return null
      const what = `crictl's ${id.slice(PREFIX.length)} commands`
      return `import {leftOut} from 'podctl:left-out';\nleftOut(${JSON.stringify(what)});\nexport const ACTIONS = {};`
    },
    buildEnd() {
      if (!seen) throw new Error('dist/lib/crictl/actions.js no longer imports ./actions/<group>.js: update scripts/bundle/quick.mjs')
    },
  }
}
