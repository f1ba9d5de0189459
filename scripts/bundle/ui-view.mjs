// podctl ui's Ink view stays out of the one-file bundle: inlined, Ink, React and yoga's WebAssembly
// would be read and parsed on every start of every command. Inside the bundle the view's dynamic
// import (src/lib/ui/load-view.ts) becomes a require of dist/bundle/ui-view.cjs, written here: a real
// CommonJS file, so its import() works (the bundle runs in vm.Script, which has none), and it loads
// dist/lib/ui/view/index.js with Ink and React from node_modules, only when `podctl ui` runs.
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'

export const UI_VIEW_LOADER = 'ui-view.cjs'
const LOAD_VIEW = join('dist', 'lib', 'ui', 'load-view.js')
const VIEW_IMPORT = "import('./view/index.js')"

/**
 * A rolldown plugin: the view's import in load-view.js becomes the loader's; the build fails if that
 * import moved, or if load-view.js was not bundled where it is `required` (the quick bundle has no ui).
 */
export function uiViewOutside(root, {required = true} = {}) {
  let seen = false
  return {
    name: 'podctl-ui-view-outside',
    transform(code, id) {
      if (id !== join(root, LOAD_VIEW)) return null
      if (!code.includes(VIEW_IMPORT)) throw new Error(`${LOAD_VIEW} no longer has ${VIEW_IMPORT}: update scripts/bundle/ui-view.mjs`)
      seen = true
      return code.replace(VIEW_IMPORT, `require(${JSON.stringify(`./${UI_VIEW_LOADER}`)})()`)
    },
    resolveId(source) {
      return source === `./${UI_VIEW_LOADER}` ? {id: source, external: true} : null
    },
    buildEnd() {
      if (!seen && required) throw new Error(`${LOAD_VIEW} was not bundled: update scripts/bundle/ui-view.mjs`)
    },
  }
}

/** The loader beside the bundle: dist/bundle/ui-view.cjs → ../lib/ui/view/index.js. */
export function writeUiViewLoader(outDir) {
  writeFileSync(join(outDir, UI_VIEW_LOADER), "'use strict'\nmodule.exports = () => import('../lib/ui/view/index.js')\n")
}
