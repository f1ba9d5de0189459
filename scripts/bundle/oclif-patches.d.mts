// Types for test/unit/bundle/*.test.ts.
export declare const COMPARE_IDS: string
export declare const PATCHES: Record<string, Array<[find: string, replace: string]>>
export declare function oclifPatches(): unknown
export declare const LAZY_REQUIRES: Record<string, string[]>
export declare const LAZY_MODULE: string
export declare function lazyRequire(code: string, specifier: string, file: string): string
