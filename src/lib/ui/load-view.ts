/**
 * The Ink view, loaded only when `podctl ui` runs. Unbundled this is a plain dynamic import. The
 * one-file bundle (scripts/bundle/ui-view.mjs) replaces the import with a `require` of
 * dist/bundle/ui-view.cjs, a loader beside the bundle that imports dist/lib/ui/view/index.js and,
 * through it, Ink and React from node_modules: the bundle holds none of them, so no other command
 * reads, compiles or caches a byte of them.
 */
import {ExitCode, PodctlError} from '../errors.js'
import type * as View from './view/index.js'

export type ViewModule = Pick<typeof View, 'mount'>

/**
 * Ink decides once, when it is first imported, whether it runs "in CI" (CI or CONTINUOUS_INTEGRATION
 * set) and then draws nothing until the view ends. `podctl ui` only runs on a terminal, and a person
 * at a terminal with CI set (a CI job's debug shell, tmate on a runner) must still see the view:
 * Ink is imported with both variables hidden, then they are put back as they were.
 */
async function importWithoutCi(): Promise<ViewModule> {
  const hidden = ['CI', 'CONTINUOUS_INTEGRATION'].filter((name) => name in process.env)
  const saved = hidden.map((name) => [name, process.env[name]] as const)
  for (const name of hidden) delete process.env[name]
  try {
    return await import('./view/index.js')
  } finally {
    for (const [name, value] of saved) process.env[name] = value
  }
}

export async function loadView(): Promise<ViewModule> {
  try {
    return await importWithoutCi()
  } catch (error) {
    // The single executable holds the bundle alone: no node_modules, so no Ink.
    const why = error instanceof Error ? error.message.split('\n')[0] : String(error)
    throw new PodctlError(
      'InternalError',
      ExitCode.INTERNAL,
      `podctl ui cannot load its terminal view (${why}); it needs podctl installed from npm`,
    )
  }
}
