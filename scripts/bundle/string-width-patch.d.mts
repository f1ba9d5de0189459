// Types for test/unit/bundle/*.test.ts.
export declare const STRING_WIDTH_PATCH: [find: string, replace: string]
export declare function stringWidthFile(root: string): string
export declare function stringWidthPatch(root: string): unknown
