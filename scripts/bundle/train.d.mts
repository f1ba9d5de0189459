// Types for test/unit/launch.test.ts.
export declare const CACHE_GROUPS: string[]
export declare function cacheFile(dir: string, group?: string): string
export declare function trainCaches(options: {bundle: string; outDir?: string; node?: string}): void
