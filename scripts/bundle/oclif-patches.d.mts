// Types for test/unit/bundle/*.test.ts.
export declare const COMPARE_IDS: string
/** What oclif's help template function returns for text t (an expression of ejs_1, context and t). */
export declare const RENDER_HELP_TEXT: string
export declare const PATCHES: Record<string, Array<[find: string, replace: string]>>
export declare function oclifPatches(): unknown
export declare const LAZY_REQUIRES: Record<string, string[]>
export declare const LAZY_MODULE: string
export declare function lazyRequire(code: string, specifier: string, file: string): string
