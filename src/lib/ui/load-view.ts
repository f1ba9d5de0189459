/**
 * The Ink view, loaded only when `podctl ui` runs. Unbundled this is a plain dynamic import; inside
 * the one-file bundle the build replaces this import with a loader of dist/bundle/podctl-ui.cjs (Ink
 * and React in a bundle of their own, scripts/bundle/ui-bundle.mjs), so no other command reads,
 * compiles or caches a byte of them.
 */
import type * as View from './view/index.js'

export type ViewModule = Pick<typeof View, 'mount'>

export async function loadView(): Promise<ViewModule> {
  return import('./view/index.js')
}
