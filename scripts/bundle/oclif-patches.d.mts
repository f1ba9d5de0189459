// Types for test/unit/bundle/*.test.ts.
export declare const COMPARE_IDS: string
export declare const PATCHES: Record<string, Array<[find: string, replace: string]>>
export declare function oclifPatches(): unknown
