// Types for test/unit/bundle/inject.test.ts.
export declare const UNNAMED_NOTE_SECTION_WARNING: RegExp
export declare function isUnnamedNoteWarning(line: string): boolean
export declare function injectBlob(executable: string, blob: Buffer, sentinelFuse: string, warn?: (line: string) => void): Promise<void>
