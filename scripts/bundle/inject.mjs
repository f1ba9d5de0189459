// Injects the single-executable blob into a copy of node with postject, without the warnings that
// postject prints on every Linux build and that say nothing about this build.
//
// postject 1.0.0-alpha.6 runs LIEF compiled to WebAssembly; LIEF's log lines reach us through
// emscripten's printErr, which is console.warn (bound when inject() loads the module). To add the
// blob, LIEF rebuilds the PT_NOTE segment and gives every note it holds a new SHT_NOTE section
// named after the note's type: '.note' for the blob's own note (type 0), '.note.100' for each
// NT_GNU_BUILD_ATTRIBUTE_OPEN note it read from '.gnu.build.attributes' (nodejs.org's builds, and
// NodeSource's packages of them, are compiled with annobin). Those names were never put into
// .shstrtab, so Builder::build_sections (src/ELF/Builder.tcc) warns "Can't find string offset for
// section name '…'" once per note section and leaves the section unnamed. Node does not look for
// the blob by section name: postject_find_resource() walks the PT_NOTE program headers for the note
// named NODE_SEA_BLOB. So the lines are harmless, and they come with any input (a plain /bin/true
// gives the '.note' one). Upstream: nodejs/postject#83 (the very nine lines), lief-project/LIEF#816.
//
// Exactly those lines are dropped; every other line postject prints (LIEF's errors, warnings about
// a malformed input, a warning for a section with a real name) still shows, and its errors still
// throw.
import {createRequire} from 'node:module'

/** The warning LIEF prints for a note section it created itself: '.note' or '.note.<type in hex>'. */
export const UNNAMED_NOTE_SECTION_WARNING = /^warning: Can't find string offset for section name '\.note(\.[0-9a-f]+)?'$/

/** Whether postject's line is the known, harmless warning about a note section LIEF created. */
export function isUnnamedNoteWarning(line) {
  return UNNAMED_NOTE_SECTION_WARNING.test(line)
}

/**
 * Injects `blob` as NODE_SEA_BLOB into `executable` (a copy of node) at `sentinelFuse`. postject's
 * lines go to `warn` (console.warn by default), except the known ones above.
 */
export async function injectBlob(executable, blob, sentinelFuse, warn = console.warn) {
  const {inject} = createRequire(import.meta.url)('postject')
  const consoleWarn = console.warn
  console.warn = (...args) => {
    const line = args.join(' ')
    if (!isUnnamedNoteWarning(line)) warn(line)
  }

  try {
    await inject(executable, 'NODE_SEA_BLOB', blob, {sentinelFuse})
  } finally {
    console.warn = consoleWarn
  }
}
