// string-width 4 (what oclif's help and its wrap-ansi and widest-line measure text with) strips ANSI
// escapes, then runs its whole emoji regular expression over the string, then walks it code point
// by code point: for every word of every line of help. Measured: wrap-ansi's calls to it were about
// a tenth of a `podctl --help` start. For printable ASCII (U+0020-U+007E) every one of those steps
// is the identity: no escape starts there, every emoji sequence needs a code point above U+007F,
// and each such character is one column. The bundle's copy answers those strings with their length
// at once; any other string takes string-width's own way. Inside the bundle only (node_modules is
// untouched), with the checks of the oclif patches; test/unit/bundle/string-width-patch.test.ts
// compares the two on random and hand-picked strings.
import {createRequire} from 'node:module'
import {join} from 'node:path'

import {sourcePatches} from './oclif-patches.mjs'

/** The exact text the fast path goes after, and the text it becomes. */
export const STRING_WIDTH_PATCH = [
  `\tif (typeof string !== 'string' || string.length === 0) {
\t\treturn 0;
\t}
`,
  `\tif (typeof string !== 'string' || string.length === 0) {
\t\treturn 0;
\t}

\tif (/^[\\x20-\\x7E]*$/.test(string)) {
\t\treturn string.length;
\t}
`,
]

/** The string-width that oclif requires (other major versions, ESM ones under ora and ink, are not this code). */
export function stringWidthFile(root) {
  const fromOclif = createRequire(join(root, 'node_modules', '@oclif', 'core', 'package.json'))
  return fromOclif.resolve('string-width')
}

/** A rolldown plugin: the fast path in that one file; the build fails if its text changed or it was not bundled. */
export function stringWidthPatch(root) {
  const file = stringWidthFile(root)
  const patch = sourcePatches({name: 'podctl-string-width-patch', packageDir: 'string-width', patches: {'index.js': [STRING_WIDTH_PATCH]}})
  return {
    ...patch,
    transform: {
      filter: {id: /string-width/},
      handler(code, id) {
        return id === file ? patch.transform.handler(code, id) : null
      },
    },
  }
}
